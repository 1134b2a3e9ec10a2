/// A command line that cannot be run; the message says what is wrong.
package struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    package let message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
