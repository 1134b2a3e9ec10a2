import CLinux
import Glibc

/// An epoll instance: which of the descriptors added to it are ready, each reported with
/// the token it was added with.
package struct EpollDescriptor {
    package let descriptor: FileDescriptor

    package struct Events: OptionSet, Sendable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        package static let readable = Events(rawValue: EPOLLIN.rawValue)
        package static let writable = Events(rawValue: EPOLLOUT.rawValue)
        /// Reported whether asked for or not: the peer hung up, or the descriptor failed.
        package static let hangUp = Events(rawValue: EPOLLHUP.rawValue)
        package static let error = Events(rawValue: EPOLLERR.rawValue)
        /// Reported once, then not again until `modify` arms the descriptor anew.
        package static let oneShot = Events(rawValue: EPOLLONESHOT.rawValue)
    }

    package struct Event: Sendable {
        package let token: UInt64
        package let events: Events
    }

    package static func make() throws(Errno) -> EpollDescriptor {
        EpollDescriptor(descriptor: FileDescriptor(rawValue: try Posix.call { epoll_create1(CInt(EPOLL_CLOEXEC)) }))
    }

    package func add(_ watched: FileDescriptor, for events: Events, token: UInt64) throws(Errno) {
        try control(EPOLL_CTL_ADD, watched, events, token)
    }

    package func modify(_ watched: FileDescriptor, for events: Events, token: UInt64) throws(Errno) {
        try control(EPOLL_CTL_MOD, watched, events, token)
    }

    /// Call before closing `watched`: epoll forgets a descriptor only once every descriptor
    /// of its open file is closed.
    package func remove(_ watched: FileDescriptor) throws(Errno) {
        try Posix.call { epoll_ctl(descriptor.rawValue, EPOLL_CTL_DEL, watched.rawValue, nil) }
    }

    /// Waits until something is ready and returns up to `maximumCount` events; none when
    /// interrupted by a signal.
    package func wait(maximumCount: Int) throws(Errno) -> [Event] {
        var events = [epoll_event](repeating: epoll_event(), count: maximumCount)
        // Not through Posix.call: a signal ends the wait, and the caller decides whether to
        // wait again (after checking whether it is to stop).
        let count = epoll_wait(descriptor.rawValue, &events, CInt(maximumCount), -1)
        if count == -1 {
            let error = Errno.current
            if error == .interrupted { return [] }
            throw error
        }
        return events.prefix(Int(count)).map { Event(token: $0.data.u64, events: Events(rawValue: $0.events)) }
    }

    package func close() {
        descriptor.close()
    }

    private func control(_ operation: CInt, _ watched: FileDescriptor, _ events: Events, _ token: UInt64) throws(Errno) {
        var event = epoll_event()
        event.events = events.rawValue
        event.data.u64 = token
        try Posix.call { epoll_ctl(descriptor.rawValue, operation, watched.rawValue, &event) }
    }
}
