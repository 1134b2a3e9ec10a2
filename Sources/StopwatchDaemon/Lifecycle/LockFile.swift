import Glibc
import LinuxSystem

/// A lock file held for the daemon's life, in a directory it trusts.
enum LockFile {
    enum Outcome {
        /// Locked: keep the descriptor open for as long as the lock must hold.
        case locked(FileDescriptor)
        /// Another process holds it.
        case held
    }

    /// Opens (creating, 0600) and locks `name` in `directory` without waiting. Never follows
    /// a symbolic link: one planted at the name is removed and the file made afresh (a link
    /// cannot be anyone's lock, and in a trusted directory only its owner could have made it).
    static func take(_ name: String, in directory: DirectoryDescriptor) throws(Errno) -> Outcome {
        let flags: OpenFlags = [.readWrite, .create, .noFollow, .nonBlocking]
        let file: FileDescriptor
        do {
            file = try directory.openFile(name, flags)
        } catch where error == .tooManyLinks {
            try directory.remove(name)
            file = try directory.openFile(name, flags)
        }
        let locked: Bool
        do throws(Errno) {
            guard try file.status().kind == .regular else { throw Errno(EINVAL) }
            locked = try file.tryLockExclusively()
        } catch {
            file.close()
            throw error
        }
        guard locked else {
            file.close()
            return .held
        }
        return .locked(file)
    }
}
