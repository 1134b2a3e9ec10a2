import CLinux
import Glibc

/// An `eventfd`: a counter another thread can bump to wake whoever waits on it in epoll.
package struct EventDescriptor {
    package let descriptor: FileDescriptor

    package static func make() throws(Errno) -> EventDescriptor {
        EventDescriptor(descriptor: FileDescriptor(rawValue: try Posix.call { eventfd(0, CInt(EFD_CLOEXEC | EFD_NONBLOCK)) }))
    }

    /// Makes it readable (until read, which nothing here needs to do).
    package func signal() {
        var one: UInt64 = 1
        _ = try? Posix.call { write(descriptor.rawValue, &one, MemoryLayout<UInt64>.size) }
    }

    package func close() {
        descriptor.close()
    }
}
