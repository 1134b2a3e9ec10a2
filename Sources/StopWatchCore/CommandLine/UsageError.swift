/// A command line that cannot be run; the message says what is wrong.
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
