import Glibc

/// What `poll(2)` waits for on a descriptor, and what it found: `FileDescriptor.poll(_:timeout:)`.
package struct PollEvents: OptionSet, Sendable, Hashable {
    package let rawValue: Int16

    package init(rawValue: Int16) {
        self.rawValue = rawValue
    }

    /// Data to read, or the end of it.
    package static let readable = PollEvents(rawValue: Int16(POLLIN))
    /// Room to write.
    package static let writable = PollEvents(rawValue: Int16(POLLOUT))
    /// Reported whether asked for or not: the peer hung up (a socket or terminal), or an error
    /// (a pipe whose reader went away).
    package static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
    package static let error = PollEvents(rawValue: Int16(POLLERR))
    package static let invalid = PollEvents(rawValue: Int16(POLLNVAL))
}
