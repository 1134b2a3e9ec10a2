import Glibc

/// An error number from a failed system call, thrown instead of returning `-1`.
package struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    package let code: CInt

    package init(_ code: CInt) {
        self.code = code
    }

    /// The value of `errno` now: read it right after the call that failed.
    package static var current: Errno { Errno(errno) }

    package var description: String {
        guard let message = strerror(code) else { return "error \(code)" }
        return String(cString: message)
    }

    package static let interrupted = Errno(EINTR)
    package static let wouldBlock = Errno(EAGAIN)
    package static let noEntry = Errno(ENOENT)
    package static let exists = Errno(EEXIST)
    package static let permissionDenied = Errno(EACCES)
    package static let notPermitted = Errno(EPERM)
    package static let connectionReset = Errno(ECONNRESET)
    package static let connectionAborted = Errno(ECONNABORTED)
    package static let brokenPipe = Errno(EPIPE)
    package static let addressInUse = Errno(EADDRINUSE)
    package static let nameTooLong = Errno(ENAMETOOLONG)
    package static let canceled = Errno(ECANCELED)
    /// A symbolic link met where `O_NOFOLLOW` forbids one.
    package static let tooManyLinks = Errno(ELOOP)
    package static let badDescriptor = Errno(EBADF)
    package static let notDirectory = Errno(ENOTDIR)
    package static let fileTooLarge = Errno(EFBIG)
    /// Opening a socket file, or a FIFO for writing with nobody reading.
    package static let noDeviceOrAddress = Errno(ENXIO)
}
