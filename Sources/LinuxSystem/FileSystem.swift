import Glibc

/// The few file-system calls on paths that remain: the daemon reaches its own directories
/// through `DirectoryDescriptor`; these serve the client, `/proc`, the
/// benchmark and the tests.
package enum FileSystem {
    package enum Kind: Equatable, Sendable {
        case missing, directory, socket, regular, other
    }

    /// What is at `path`, without following a final symbolic link.
    package static func kind(at path: String) throws(Errno) -> Kind {
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
    package static func ownerAndMode(at path: String) throws(Errno) -> (uid: uid_t, gid: gid_t, mode: mode_t) {
        var info = stat()
        try Posix.call { lstat(path, &info) }
        return (info.st_uid, info.st_gid, info.st_mode & 0o7777)
    }

    /// Creates `path` and its missing parents with `mode`; an existing directory is fine.
    package static func makeDirectories(_ path: String, mode: mode_t) throws(Errno) {
        guard try kind(at: path) != .directory else { return }
        let parent = directoryName(of: path)
        if parent != path, !parent.isEmpty { try makeDirectories(parent, mode: mode) }
        do {
            try Posix.call { mkdir(path, mode) }
        } catch where error == .exists {
            guard try kind(at: path) == .directory else { throw error }
        }
    }

    /// Removes the file at `path`; a missing one is fine.
    package static func remove(_ path: String) throws(Errno) {
        do {
            try Posix.call { unlink(path) }
        } catch where error == .noEntry {}
    }

    /// `path` with every symbolic link, `.` and `..` resolved (`realpath`).
    package static func resolvedPath(_ path: String) throws(Errno) -> String {
        guard let resolved = realpath(path, nil) else { throw Errno.current }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The directory part of `path`: "/run/x/y.sock" → "/run/x", "y" → ".".
    package static func directoryName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// Sets the file-creation mask and returns the previous one.
    @discardableResult
    package static func setUmask(_ mask: mode_t) -> mode_t {
        umask(mask)
    }

    /// The bytes of the file at `path`; throws `EFBIG` for one longer than `limit`.
    package static func contents(of path: String, limit: Int) throws(Errno) -> [UInt8] {
        let file = try FileDescriptor.open(path, O_RDONLY)
        defer { file.close() }
        return try file.readAll(limit: limit)
    }

    /// The names in directory `path` (followed if a link), without "." and "..".
    package static func entries(of path: String) throws(Errno) -> [String] {
        let file = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
        defer { file.close() }
        return try DirectoryDescriptor(file).entries()
    }

    /// A compact UTC timestamp for file names, e.g. `20261122T045500Z`.
    package static func timestamp(wall: Duration) -> String {
        var seconds = time_t(wall.components.seconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }
}
