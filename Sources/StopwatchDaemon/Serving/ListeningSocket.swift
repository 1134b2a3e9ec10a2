import Glibc
import LinuxSystem

/// The socket the daemon listens on: passed by systemd, or bound here.
struct ListeningSocket {
    let descriptor: FileDescriptor
    /// The path bound here, which the daemon removes when it exits; nil when systemd owns the
    /// socket (it must outlive the daemon for activation to work).
    let ownedPath: String?
    /// How to name it in logs.
    let name: String
    /// The path it listens on, as a client names it (`@name` for an abstract socket): the
    /// one bound, or for one systemd passed, the one the kernel says it is bound to. Nil
    /// when it has none (an unnamed socket, or the kernel would not say).
    let path: String?
    /// Held for the daemon's life: the lock that makes it the only daemon on this path.
    let instanceLock: FileDescriptor?
    /// The socket's directory, opened once and checked: the socket, its lock and its removal
    /// at exit all go through it.
    let directory: DirectoryDescriptor?

    static let backlog: CInt = 512

    /// The sockets systemd passed (`LISTEN_PID` is this process, `LISTEN_FDS` ≥ 1: fds 3 and
    /// up): the first, made non-blocking, is the one served when `serving` (nil otherwise, or
    /// when none was passed); every other one is closed, since nothing here uses it and no
    /// hook is to inherit it. The variables are unset so children do not take them for
    /// theirs. Call before anything opens a descriptor, which could take one of their numbers
    /// were `LISTEN_FDS` wrong. (The count is capped: a number past any open descriptor only
    /// fails harmlessly.)
    static func takePassed(_ environment: ProcessEnvironment, serving: Bool) -> ListeningSocket? {
        guard isPassed(environment), let count = environment["LISTEN_FDS"].flatMap({ Int($0) }) else { return nil }
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { ProcessEnvironment.unset(name) }
        for unused in (serving ? 4 : 3)..<(3 + min(count, 1024)) {
            FileDescriptor(rawValue: CInt(unused)).close()
        }
        guard serving else { return nil }
        let descriptor = FileDescriptor(rawValue: 3)
        try? descriptor.setNonBlocking()
        // Already close-on-exec, as every inherited descriptor (`closeInheritedDescriptorsOnExec`);
        // said again for a caller that did not start so.
        try? descriptor.setCloseOnExec()
        let path = try? descriptor.boundPath()
        return ListeningSocket(
            descriptor: descriptor, ownedPath: nil, name: path.map { "\($0) (passed by systemd)" } ?? "the socket passed by systemd",
            path: path, instanceLock: nil, directory: nil
        )
    }

    /// Whether systemd passed this process a socket (`LISTEN_PID` is this process,
    /// `LISTEN_FDS` ≥ 1), without taking it.
    static func isPassed(_ environment: ProcessEnvironment) -> Bool {
        guard let pid = environment["LISTEN_PID"].flatMap({ pid_t($0) }), pid == CurrentProcess.id,
            let count = environment["LISTEN_FDS"].flatMap({ Int($0) })
        else { return false }
        return count >= 1
    }

    /// Binds and listens at `path`. A daemon already answering there is left alone (and this
    /// one refuses to start); a socket file nobody answers on is replaced.
    ///
    /// - Parameters:
    ///   - group: when set, the socket is 0660 and owned by this group (and the directories
    ///     made for it 0750 and the group's too); otherwise 0600.
    static func bind(path: String, group: gid_t?, trust: DirectoryTrust = .currentProcess) throws(DaemonStartError) -> ListeningSocket {
        guard path.utf8.count <= FileDescriptor.maximumSocketPathLength else {
            throw DaemonStartError("socket path \(path) is longer than \(FileDescriptor.maximumSocketPathLength) bytes; choose a shorter one with --socket")
        }
        if path.hasPrefix("@") {
            return try listen(at: path, in: nil, group: nil, instanceLock: nil)
        }
        let directory = try openDirectory(for: path, group: group, trust: trust)
        let instanceLock: FileDescriptor
        do {
            // Checking for a live daemon, removing a stale socket and binding are three
            // steps: the lock makes them one for daemons starting at the same moment.
            instanceLock = try lockInstance(at: path, in: directory)
        } catch {
            directory.close()
            throw error
        }
        do {
            try removeStaleSocket(at: path, in: directory)
            return try listen(at: path, in: directory, group: group, instanceLock: instanceLock)
        } catch {
            instanceLock.close()
            directory.close()
            throw error
        }
    }

    /// The name of the socket file in its directory.
    private static func entryName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// The path to bind or connect to: through the directory's descriptor when `/proc` has
    /// it (so a directory renamed or swapped further up changes nothing), else `path`.
    private static func address(of path: String, in directory: DirectoryDescriptor?) -> String {
        guard let directory, let through = directory.pathThroughDescriptor(to: entryName(of: path)),
            through.utf8.count <= FileDescriptor.maximumSocketPathLength
        else { return path }
        return through
    }

    private static func listen(
        at path: String,
        in directory: DirectoryDescriptor?,
        group: gid_t?,
        instanceLock: FileDescriptor?
    ) throws(DaemonStartError) -> ListeningSocket {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.unixStreamSocket(nonBlocking: true)
        } catch {
            throw DaemonStartError("cannot create a socket: \(error); the system may be out of file descriptors (see ulimit -n)")
        }
        do throws(Errno) {
            // Created with its final mode (0600, or 0660 for a group), so no chmod by path
            // follows: `fchmod` on a socket's descriptor does not reach its file on Linux.
            let previousMask = FileSystem.setUmask(group == nil ? 0o177 : 0o117)
            defer { FileSystem.setUmask(previousMask) }
            try descriptor.bind(toPath: address(of: path, in: directory))
            if let directory, let group {
                // Not listening yet, so nobody can connect before the group is right; and
                // `fchownat` with AT_SYMLINK_NOFOLLOW never follows a link swapped in.
                try directory.setGroup(of: entryName(of: path), to: group)
            }
            try descriptor.listen(backlog: backlog)
        } catch {
            descriptor.close()
            if error == .addressInUse {
                throw DaemonStartError("another stopwatchd is already running on \(path); stop it first (or use --socket for a second one)")
            }
            throw DaemonStartError("cannot listen on \(path): \(error); check that this user may write there, or choose another path with --socket")
        }
        let isAbstract = directory == nil
        return ListeningSocket(
            descriptor: descriptor, ownedPath: isAbstract ? nil : path, name: path, path: path, instanceLock: instanceLock, directory: directory
        )
    }

    /// Removes the socket file bound here, through its directory.
    func removeOwnedSocket() {
        guard let ownedPath, let directory else { return }
        try? directory.remove(Self.entryName(of: ownedPath))
    }

    /// Takes `<path>.lock`, which every daemon on `path` holds while it runs.
    private static func lockInstance(at path: String, in directory: DirectoryDescriptor) throws(DaemonStartError) -> FileDescriptor {
        let lockName = entryName(of: path) + ".lock"
        let outcome: LockFile.Outcome
        do {
            outcome = try LockFile.take(lockName, in: directory)
        } catch {
            throw DaemonStartError("cannot lock \(path).lock: \(error); check that this user may write there, or choose another path with --socket")
        }
        switch outcome {
        case .locked(let lock): return lock
        case .held: throw DaemonStartError("another stopwatchd is already running on \(path); stop it first (or use --socket for a second one)")
        }
    }

    /// Opens the socket's directory, creating it if missing: 0700, or 0750 and owned by the
    /// allowed group, so that only those who may talk to the daemon can reach the socket (0755
    /// for root without a group: its socket's own mode guards it). Every directory made here
    /// gets that group and mode, so a group member can reach a socket several levels down.
    /// The socket's own directory must be trusted (`DirectoryTrust`); its parents are not
    /// checked (`/run/user/UID` and the like are the system's).
    private static func openDirectory(for path: String, group: gid_t?, trust: DirectoryTrust) throws(DaemonStartError) -> DirectoryDescriptor {
        let directoryPath = FileSystem.directoryName(of: path)
        let mode: mode_t = group != nil ? 0o750 : (trust.userID == 0 ? 0o755 : 0o700)
        let directory: DirectoryDescriptor
        do {
            directory = try DirectoryDescriptor.open(directoryPath, creatingWith: mode) { (made) throws(Errno) in
                try made.setGroupAndMode(group: group, mode: mode)
            }
        } catch where error == .tooManyLinks {
            throw DaemonStartError("the socket directory \(directoryPath) is a symbolic link; give the directory it points to in --socket")
        } catch {
            throw DaemonStartError("cannot open the socket directory \(directoryPath): \(error); check that this user may write there, or choose another path with --socket")
        }
        let problem: String?
        do {
            problem = trust.problem(with: try directory.status(), path: directoryPath)
        } catch {
            directory.close()
            throw DaemonStartError("cannot inspect the socket directory \(directoryPath): \(error)")
        }
        if let problem {
            directory.close()
            throw DaemonStartError("refusing the socket directory: \(problem); or choose another path with --socket")
        }
        return directory
    }

    private static func removeStaleSocket(at path: String, in directory: DirectoryDescriptor) throws(DaemonStartError) {
        let status: FileStatus?
        do {
            status = try directory.status(of: entryName(of: path))
        } catch {
            throw DaemonStartError("cannot inspect \(path): \(error); check that this user may write there, or choose another path with --socket")
        }
        guard let status else { return }
        guard status.kind == .socket else {
            throw DaemonStartError("\(path) exists and is not a socket; remove it or choose another path with --socket")
        }
        if isAnswering(address(of: path, in: directory)) {
            throw DaemonStartError("another stopwatchd is already running on \(path); stop it first (or use --socket for a second one)")
        }
        do {
            try directory.remove(entryName(of: path))
        } catch {
            throw DaemonStartError("cannot replace the stale socket \(path): \(error); check that this user may write there, or choose another path with --socket")
        }
    }

    /// Whether something accepts connections at `path`.
    private static func isAnswering(_ path: String) -> Bool {
        guard let probe = try? FileDescriptor.unixStreamSocket(nonBlocking: true) else { return false }
        defer { probe.close() }
        do {
            try probe.connect(toPath: path)
            return true
        } catch {
            // Refused: nobody listens. A full backlog (EAGAIN) means somebody does.
            return error == .wouldBlock
        }
    }
}
