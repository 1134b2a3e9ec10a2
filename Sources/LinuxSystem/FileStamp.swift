import Glibc

/// Which file a name is and when it last changed, by one `fstatat` that does not follow a
/// link: enough to tell a file is as it was when it was last read (same device, inode,
/// change time and size), and when its content was last written (`modificationTime`).
package struct FileStamp: Equatable, Sendable {
    package let isRegular: Bool
    package let device: UInt64
    package let inode: UInt64
    package let size: Int64
    /// `st_ctim`, in nanoseconds since the epoch: no program can set it, and every write
    /// moves it.
    package let changeTime: Int64
    /// `st_mtim`, in milliseconds since the epoch: when the content was last written (a sync
    /// tool may set it to the writer's).
    package let modifiedMs: Int64

    package init(_ info: stat) {
        isRegular = info.st_mode & S_IFMT == S_IFREG
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        changeTime = Int64(info.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_ctim.tv_nsec)
        modifiedMs = Int64(info.st_mtim.tv_sec) &* 1_000 &+ Int64(info.st_mtim.tv_nsec) / 1_000_000
    }
}

extension DirectoryDescriptor {
    /// The stamp of `name` in this directory, without following a symbolic link; nil when
    /// there is nothing.
    package func stamp(of name: String) throws(Errno) -> FileStamp? {
        var info = stat()
        do {
            try Posix.call { fstatat(descriptor.rawValue, name, &info, AT_SYMLINK_NOFOLLOW) }
        } catch where error == .noEntry {
            return nil
        }
        return FileStamp(info)
    }
}

extension FileDescriptor {
    /// The stamp of the open file (`fstat`).
    package func stamp() throws(Errno) -> FileStamp {
        var info = stat()
        try Posix.call { fstat(rawValue, &info) }
        return FileStamp(info)
    }
}
