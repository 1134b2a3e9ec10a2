import Glibc

/// Flags of `open`/`openat`. `O_CLOEXEC` is always added: no descriptor the daemon opens
/// should leak into a child.
package struct OpenFlags: OptionSet, Sendable {
    package let rawValue: CInt

    package init(rawValue: CInt) {
        self.rawValue = rawValue
    }

    package static let readOnly = OpenFlags([])
    package static let writeOnly = OpenFlags(rawValue: O_WRONLY)
    package static let readWrite = OpenFlags(rawValue: O_RDWR)
    package static let create = OpenFlags(rawValue: O_CREAT)
    /// With `create`: fail with `EEXIST` if anything (a symbolic link included) is there.
    package static let exclusive = OpenFlags(rawValue: O_EXCL)
    /// A symbolic link as the last component fails with `ELOOP` instead of being followed.
    package static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
    /// Opening a FIFO returns at once instead of waiting for a writer.
    package static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
}
