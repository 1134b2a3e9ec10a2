import CLinux
import Glibc

/// An open directory, used through `openat` and friends: every name is looked up in this
/// directory and no other, so a symbolic link or a rename further up the path after it was
/// opened changes nothing, and no call here follows a symbolic link in the directory itself.
///
/// A plain value like `FileDescriptor`: close it explicitly with `close()`.
package struct DirectoryDescriptor: Sendable, CustomStringConvertible {
    package let descriptor: FileDescriptor

    /// Takes `descriptor`, which must be an open directory; closing it is the caller's.
    package init(_ descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    package var description: String { "directory \(descriptor)" }

    private static let directoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC

    /// Opens the directory at `path`. A symbolic link as its last component fails with
    /// `ELOOP`, anything else that is not a directory with `ENOTDIR`.
    package static func open(_ path: String) throws(Errno) -> DirectoryDescriptor {
        try open(path, followingLinks: false)
    }

    /// Opens the directory at `path`, through a symbolic link there when `followingLinks`.
    private static func open(_ path: String, followingLinks: Bool) throws(Errno) -> DirectoryDescriptor {
        let flags = followingLinks ? directoryFlags & ~O_NOFOLLOW : directoryFlags
        do {
            return DirectoryDescriptor(FileDescriptor(rawValue: try Posix.call { Glibc.open(path, flags) }))
        } catch where error == .notDirectory {
            // With O_DIRECTORY the kernel reports a link as "not a directory": tell them apart.
            var info = stat()
            if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK { throw .tooManyLinks }
            throw error
        }
    }

    /// Opens the directory at `path`, creating it and its missing parents with `mode`; each
    /// directory made here is passed to `made` (to set its group or exact mode) before use.
    /// Only `path` itself must not be a symbolic link: its existing parents may be (a
    /// `~/.local` kept elsewhere, `/var/run` → `/run`).
    package static func open(
        _ path: String,
        creatingWith mode: mode_t,
        made: (DirectoryDescriptor) throws(Errno) -> Void = { _ throws(Errno) in }
    ) throws(Errno) -> DirectoryDescriptor {
        try open(path, creatingWith: mode, followingLinks: false, made: made)
    }

    private static func open(
        _ path: String,
        creatingWith mode: mode_t,
        followingLinks: Bool,
        made: (DirectoryDescriptor) throws(Errno) -> Void
    ) throws(Errno) -> DirectoryDescriptor {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        do {
            return try open(path, followingLinks: followingLinks)
        } catch where error == .noEntry {
            // Made below, one component at a time, each relative to its parent's descriptor.
        }
        guard let slash = path.lastIndex(of: "/") else {
            return try open(".").closeAfter { (current) throws(Errno) in
                try current.openDirectory(path, creatingWith: mode, made: made)
            }
        }
        let name = String(path[path.index(after: slash)...])
        let parentPath = slash == path.startIndex ? "/" : String(path[..<slash])
        let parent = try open(parentPath, creatingWith: mode, followingLinks: true, made: made)
        return try parent.closeAfter { (parent) throws(Errno) in
            try parent.openDirectory(name, creatingWith: mode, made: made)
        }
    }

    /// Opens the subdirectory `name`, never through a symbolic link; creates it with `mode`
    /// when missing and `mode` is given, and passes it to `made` if it did.
    package func openDirectory(
        _ name: String,
        creatingWith mode: mode_t? = nil,
        made: (DirectoryDescriptor) throws(Errno) -> Void = { _ throws(Errno) in }
    ) throws(Errno) -> DirectoryDescriptor {
        guard let mode else { return try openDirectoryOnly(name) }
        do {
            return try openDirectoryOnly(name)
        } catch where error == .noEntry {
            // Made below.
        }
        var created = true
        do {
            try Posix.call { mkdirat(descriptor.rawValue, name, mode) }
        } catch where error == .exists {
            created = false  // Made by someone else meanwhile: checked like any existing one.
        }
        let directory = try openDirectoryOnly(name)
        guard created else { return directory }
        do {
            try made(directory)
            // The new entry durable in its parent: a crash must not lose the folder, and what
            // is written in it next, while its contents were flushed.
            try sync()
        } catch {
            directory.close()
            throw error
        }
        return directory
    }

    private func openDirectoryOnly(_ name: String) throws(Errno) -> DirectoryDescriptor {
        do {
            return DirectoryDescriptor(FileDescriptor(rawValue: try Posix.call { openat(descriptor.rawValue, name, Self.directoryFlags) }))
        } catch where error == .notDirectory {
            if (try? status(of: name))??.kind == .symbolicLink { throw .tooManyLinks }
            throw error
        }
    }

    /// Runs `body`, then closes the directory, whether `body` returned or threw.
    package func closeAfter<Result, Failure: Error>(_ body: (DirectoryDescriptor) throws(Failure) -> Result) throws(Failure) -> Result {
        defer { close() }
        return try body(self)
    }

    package func close() {
        descriptor.close()
    }

    /// The directory's own owner, mode and kind.
    package func status() throws(Errno) -> FileStatus {
        try descriptor.status()
    }

    /// What `name` is, without following a symbolic link; nil when there is nothing.
    package func status(of name: String) throws(Errno) -> FileStatus? {
        var info = stat()
        do {
            try Posix.call { fstatat(descriptor.rawValue, name, &info, AT_SYMLINK_NOFOLLOW) }
        } catch where error == .noEntry {
            return nil
        }
        return FileStatus(info)
    }

    /// What `name` leads to, through a symbolic link there; nil when nothing (a link to
    /// nothing included).
    package func statusFollowingLinks(of name: String) throws(Errno) -> FileStatus? {
        var info = stat()
        do {
            try Posix.call { fstatat(descriptor.rawValue, name, &info, 0) }
        } catch where error == .noEntry {
            return nil
        }
        return FileStatus(info)
    }

    /// Opens `name` only as a path (`O_PATH`, close-on-exec): enough to `fstat` it and to
    /// run it as `/proc/self/fd/N`, without reading it or waiting on a FIFO. A symbolic link
    /// there is followed only when `followingLinks`.
    package func openPath(_ name: String, followingLinks: Bool) throws(Errno) -> FileDescriptor {
        let flags = clinux_O_PATH | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW)
        return FileDescriptor(rawValue: try Posix.call { openat(descriptor.rawValue, name, flags) })
    }

    /// Opens the file `name` in this directory (`O_CLOEXEC` added).
    package func openFile(_ name: String, _ flags: OpenFlags, mode: mode_t = 0o600) throws(Errno) -> FileDescriptor {
        let flags = flags.rawValue | O_CLOEXEC
        return FileDescriptor(rawValue: try Posix.call { openat(descriptor.rawValue, name, flags, mode) })
    }

    /// Renames `name` to `newName`, both in this directory; an existing `newName` is replaced.
    package func rename(_ name: String, to newName: String) throws(Errno) {
        try Posix.call { renameat(descriptor.rawValue, name, descriptor.rawValue, newName) }
    }

    /// Moves `name` to `newName` in `directory` (on the same file system), failing with
    /// EEXIST rather than replace anything there (`renameat2` with `RENAME_NOREPLACE`).
    package func move(_ name: String, to directory: DirectoryDescriptor, as newName: String) throws(Errno) {
        do {
            try Posix.call { clinux_renameat_noreplace(descriptor.rawValue, name, directory.descriptor.rawValue, newName) }
        } catch where error == Errno(EINVAL) || error == Errno(ENOSYS) {
            // A file system without RENAME_NOREPLACE: a link, which never replaces either
            // (EEXIST), then the old name removed. A crash between leaves the same file under
            // both names, which the caller must allow for.
            try Posix.call { linkat(descriptor.rawValue, name, directory.descriptor.rawValue, newName, 0) }
            try remove(name)
        }
    }

    /// Removes the entry `name` (a symbolic link itself, never what it points to); a
    /// missing one is fine.
    package func remove(_ name: String) throws(Errno) {
        do {
            try Posix.call { unlinkat(descriptor.rawValue, name, 0) }
        } catch where error == .noEntry {}
    }

    /// Sets the group of the entry `name`, never through a symbolic link.
    package func setGroup(of name: String, to group: gid_t) throws(Errno) {
        try Posix.call { fchownat(descriptor.rawValue, name, uid_t.max, group, AT_SYMLINK_NOFOLLOW) }
    }

    /// Sets this directory's own group (when given) and mode.
    package func setGroupAndMode(group: gid_t?, mode: mode_t) throws(Errno) {
        if let group { try Posix.call { fchown(descriptor.rawValue, uid_t.max, group) } }
        try Posix.call { fchmod(descriptor.rawValue, mode) }
    }

    /// Another descriptor of the same directory (close-on-exec), for another thread to use
    /// and close while this one may be closed.
    package func duplicate() throws(Errno) -> DirectoryDescriptor {
        DirectoryDescriptor(FileDescriptor(rawValue: try Posix.call { fcntl(descriptor.rawValue, F_DUPFD_CLOEXEC, 0) }))
    }

    /// Flushes the directory's entries (creations, renames, removals) to disk.
    package func sync() throws(Errno) {
        try descriptor.sync()
    }

    /// The names in the directory, without "." and "..".
    package func entries() throws(Errno) -> [String] {
        // fdopendir takes over the descriptor it is given (closedir closes it): give it a
        // copy. The copy shares the read position, hence the rewind.
        let copy = try Posix.call { fcntl(descriptor.rawValue, F_DUPFD_CLOEXEC, 0) }
        guard let stream = fdopendir(copy) else {
            let error = Errno.current
            _ = Glibc.close(copy)
            throw error
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String] = []
        let nameOffset = MemoryLayout<dirent>.offset(of: \.d_name)!
        while true {
            // NULL is the end, or an error (EIO, a directory gone stale): told apart by errno,
            // which readdir leaves alone at the end. A listing cut short must not pass for
            // the whole (a stopwatch's journal left out would be appended to as if empty).
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw Errno.current }
                break
            }
            // Read the name in place, up to its NUL: a record is only as long as its name, so
            // copying the whole `d_name` array would read past the end of the last one.
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// A path that reaches `name` through this descriptor (`/proc/self/fd/N/name`), for the
    /// calls that take only a path, such as `bind` of a Unix socket; nil without `/proc`.
    package func pathThroughDescriptor(to name: String) -> String? {
        let directory = "/proc/self/fd/\(descriptor.rawValue)"
        guard access(directory, F_OK) == 0 else { return nil }
        return directory + "/" + name
    }
}
