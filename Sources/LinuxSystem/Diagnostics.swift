import Glibc

/// Ends a command-line program with a message on standard error.
package enum Diagnostics {
    package static func fail(_ message: String, status: CInt) -> Never {
        try? FileDescriptor.standardError.writeAll(Array((message + "\n").utf8))
        CurrentProcess.exit(status)
    }

    /// Writes `message` and a newline to standard error.
    package static func warn(_ message: String) {
        try? FileDescriptor.standardError.writeAll(Array((message + "\n").utf8))
    }
}
