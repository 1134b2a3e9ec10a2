import Glibc

/// The few file-system calls the daemon needs, on paths.
public enum FileSystem {
    public enum Kind: Equatable, Sendable {
        case missing, directory, socket, regular, other
    }

    /// What is at `path`, without following a final symbolic link.
    public static func kind(at path: String) throws(Errno) -> Kind {
        var info = stat()
        do {
            try Posix.call { lstat(path, &info) }
        } catch where error == .noEntry {
            return .missing
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFSOCK: return .socket
        case S_IFREG: return .regular
        default: return .other
        }
    }

    /// The owner and permission bits of `path`.
    public static func ownerAndMode(at path: String) throws(Errno) -> (uid: uid_t, gid: gid_t, mode: mode_t) {
        var info = stat()
        try Posix.call { lstat(path, &info) }
        return (info.st_uid, info.st_gid, info.st_mode & 0o7777)
    }

    /// Creates `path` and its missing parents with `mode`; an existing directory is fine.
    public static func makeDirectories(_ path: String, mode: mode_t) throws(Errno) {
        guard try kind(at: path) != .directory else { return }
        let parent = directoryName(of: path)
        if parent != path, !parent.isEmpty { try makeDirectories(parent, mode: mode) }
        do {
            try Posix.call { mkdir(path, mode) }
        } catch where error == .exists {
            guard try kind(at: path) == .directory else { throw error }
        }
    }

    public static func setMode(_ path: String, _ mode: mode_t) throws(Errno) {
        try Posix.call { chmod(path, mode) }
    }

    public static func setOwner(_ path: String, uid: uid_t?, gid: gid_t?) throws(Errno) {
        try Posix.call { chown(path, uid ?? uid_t.max, gid ?? gid_t.max) }
    }

    /// Removes the file at `path`; a missing one is fine.
    public static func remove(_ path: String) throws(Errno) {
        do {
            try Posix.call { unlink(path) }
        } catch where error == .noEntry {}
    }

    /// The directory part of `path`: "/run/x/y.sock" → "/run/x", "y" → ".".
    public static func directoryName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// Sets the file-creation mask and returns the previous one.
    @discardableResult
    public static func setUmask(_ mask: mode_t) -> mode_t {
        umask(mask)
    }
}
