/// Why the daemon could not start; the message says what to do.
package struct DaemonStartError: Error, Equatable, Sendable, CustomStringConvertible {
    package let message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
