import Glibc

/// An error number from a failed system call, thrown instead of returning `-1`.
public struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    public let code: CInt

    public init(_ code: CInt) {
        self.code = code
    }

    /// The value of `errno` now: read it right after the call that failed.
    static var current: Errno { Errno(errno) }

    public var description: String {
        guard let message = strerror(code) else { return "error \(code)" }
        return String(cString: message)
    }

    public static let interrupted = Errno(EINTR)
    public static let wouldBlock = Errno(EAGAIN)
    public static let inProgress = Errno(EINPROGRESS)
    public static let noEntry = Errno(ENOENT)
    public static let exists = Errno(EEXIST)
    public static let permissionDenied = Errno(EACCES)
    public static let notPermitted = Errno(EPERM)
    public static let connectionRefused = Errno(ECONNREFUSED)
    public static let connectionReset = Errno(ECONNRESET)
    public static let connectionAborted = Errno(ECONNABORTED)
    public static let brokenPipe = Errno(EPIPE)
    public static let addressInUse = Errno(EADDRINUSE)
    public static let nameTooLong = Errno(ENAMETOOLONG)
    public static let tooManyOpenFiles = Errno(EMFILE)
    public static let tooManyOpenFilesInSystem = Errno(ENFILE)
    public static let invalidArgument = Errno(EINVAL)
    public static let timedOut = Errno(ETIMEDOUT)
    public static let canceled = Errno(ECANCELED)
    /// A symbolic link met where `O_NOFOLLOW` forbids one.
    public static let tooManyLinks = Errno(ELOOP)
    public static let badDescriptor = Errno(EBADF)
    public static let notDirectory = Errno(ENOTDIR)
    public static let fileTooLarge = Errno(EFBIG)
    /// Opening a socket file, or a FIFO for writing with nobody reading.
    public static let noDeviceOrAddress = Errno(ENXIO)
}
