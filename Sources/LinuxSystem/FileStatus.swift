import Glibc

/// What `fstat` says about a file: its kind, owner and permission bits, size, and which
/// file it is (device and inode).
package struct FileStatus: Equatable, Sendable {
    package enum Kind: Equatable, Sendable {
        case regular, directory, symbolicLink, socket, fifo, characterDevice, blockDevice, unknown
    }

    package let kind: Kind
    package let ownerID: uid_t
    package let groupID: gid_t
    /// The permission bits (`0o7777`).
    package let mode: mode_t
    package let size: Int64
    /// Hard links to it: 0 for a directory that was removed while open.
    package let linkCount: UInt64
    /// The device that holds it and its inode there: together, which file it is (a copy
    /// renamed over a name is another file, whatever it holds).
    package let device: UInt64
    package let inode: UInt64
    /// When its content or its inode last changed (`st_ctim`), in nanoseconds since the epoch:
    /// no program can set it, and every write moves it, in place or not, whatever the size.
    package let changeTime: Int64

    package init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFSOCK: kind = .socket
        case S_IFIFO: kind = .fifo
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        default: kind = .unknown
        }
        ownerID = info.st_uid
        groupID = info.st_gid
        mode = info.st_mode & 0o7777
        size = Int64(info.st_size)
        linkCount = UInt64(info.st_nlink)
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        changeTime = Int64(info.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_ctim.tv_nsec)
    }
}
