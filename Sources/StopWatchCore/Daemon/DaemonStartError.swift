/// Why the daemon could not start; the message says what to do.
public struct DaemonStartError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
