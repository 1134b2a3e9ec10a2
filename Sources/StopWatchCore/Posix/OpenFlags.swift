import Glibc

/// Flags of `open`/`openat`. `O_CLOEXEC` is always added: no descriptor the daemon opens
/// should leak into a child.
public struct OpenFlags: OptionSet, Sendable {
    public let rawValue: CInt

    public init(rawValue: CInt) {
        self.rawValue = rawValue
    }

    public static let readOnly = OpenFlags([])
    public static let writeOnly = OpenFlags(rawValue: O_WRONLY)
    public static let readWrite = OpenFlags(rawValue: O_RDWR)
    public static let create = OpenFlags(rawValue: O_CREAT)
    /// With `create`: fail with `EEXIST` if anything (a symbolic link included) is there.
    public static let exclusive = OpenFlags(rawValue: O_EXCL)
    /// A symbolic link as the last component fails with `ELOOP` instead of being followed.
    public static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
    /// Opening a FIFO returns at once instead of waiting for a writer.
    public static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
}
