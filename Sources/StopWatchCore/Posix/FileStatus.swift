import Glibc

/// What `fstat` says about a file: its kind, owner and permission bits.
public struct FileStatus: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case regular, directory, symbolicLink, socket, fifo, characterDevice, blockDevice, unknown
    }

    public let kind: Kind
    public let ownerID: uid_t
    public let groupID: gid_t
    /// The permission bits (`0o7777`).
    public let mode: mode_t
    public let size: Int64

    init(_ info: stat) {
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
    }
}
