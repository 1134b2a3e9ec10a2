import Glibc

/// The socket the daemon listens on: passed by systemd, or bound here.
struct ListeningSocket {
    let descriptor: FileDescriptor
    /// The path bound here, which the daemon removes when it exits; nil when systemd owns the
    /// socket (it must outlive the daemon for activation to work).
    let ownedPath: String?
    /// How to name it in logs.
    let name: String
    /// Held for the daemon's life: the lock that makes it the only daemon on this path.
    let instanceLock: FileDescriptor?

    static let backlog: CInt = 512

    /// The socket systemd passed (`LISTEN_PID` is this process, `LISTEN_FDS` ≥ 1: fd 3), made
    /// non-blocking, with the variables unset so children do not take it for theirs.
    static func activated(_ environment: ProcessEnvironment) -> ListeningSocket? {
        guard let pid = environment["LISTEN_PID"].flatMap({ pid_t($0) }), pid == CurrentProcess.id,
            let count = environment["LISTEN_FDS"].flatMap({ Int($0) }), count >= 1
        else { return nil }
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { ProcessEnvironment.unset(name) }
        let descriptor = FileDescriptor(rawValue: 3)
        try? descriptor.setNonBlocking()
        try? descriptor.setCloseOnExec()
        return ListeningSocket(descriptor: descriptor, ownedPath: nil, name: "the socket passed by systemd", instanceLock: nil)
    }

    /// Binds and listens at `path`. A daemon already answering there is left alone (and this
    /// one refuses to start); a socket file nobody answers on is replaced.
    ///
    /// - Parameters:
    ///   - group: when set, the socket is 0660 and owned by this group (and a directory made
    ///     for it 0750 and the group's too); otherwise 0600.
    static func bind(path: String, group: gid_t?) throws(DaemonStartError) -> ListeningSocket {
        guard path.utf8.count <= FileDescriptor.maximumSocketPathLength else {
            throw DaemonStartError("socket path \(path) is longer than \(FileDescriptor.maximumSocketPathLength) bytes; choose a shorter one with --socket")
        }
        let isAbstract = path.hasPrefix("@")
        var instanceLock: FileDescriptor?
        if !isAbstract {
            try prepareDirectory(for: path, group: group)
            // Checking for a live daemon, removing a stale socket and binding are three
            // steps: the lock makes them one for daemons starting at the same moment.
            instanceLock = try lockInstance(at: path)
            try removeStaleSocket(at: path)
        }
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.unixStreamSocket(nonBlocking: true)
        } catch {
            throw DaemonStartError("cannot create a socket: \(error); the system may be out of file descriptors (see ulimit -n)")
        }
        do throws(Errno) {
            // Created 0600 from the start, so there is no moment it is open to others.
            let previousMask = FileSystem.setUmask(0o177)
            defer { FileSystem.setUmask(previousMask) }
            try descriptor.bind(toPath: path)
            if !isAbstract, let group {
                try FileSystem.setOwner(path, uid: nil, gid: group)
                try FileSystem.setMode(path, 0o660)
            }
            try descriptor.listen(backlog: backlog)
        } catch {
            descriptor.close()
            instanceLock?.close()
            if error == .addressInUse {
                throw DaemonStartError("another stopwatchd is already running on \(path); stop it first (or use --socket for a second one)")
            }
            throw DaemonStartError("cannot listen on \(path): \(error); check that this user may write there, or choose another path with --socket")
        }
        return ListeningSocket(descriptor: descriptor, ownedPath: isAbstract ? nil : path, name: path, instanceLock: instanceLock)
    }

    /// Takes `<path>.lock`, which every daemon on `path` holds while it runs.
    private static func lockInstance(at path: String) throws(DaemonStartError) -> FileDescriptor {
        let lockPath = path + ".lock"
        let lock: FileDescriptor
        do {
            lock = try FileDescriptor.open(lockPath, O_RDWR | O_CREAT, mode: 0o600)
        } catch {
            throw DaemonStartError("cannot open the lock file \(lockPath): \(error); check that this user may write there, or choose another path with --socket")
        }
        do {
            guard try lock.tryLockExclusively() else {
                lock.close()
                throw DaemonStartError("another stopwatchd is already running on \(path); stop it first (or use --socket for a second one)")
            }
        } catch let error as DaemonStartError {
            throw error
        } catch {
            lock.close()
            throw DaemonStartError("cannot lock \(lockPath): \(error); check that this user may write there, or choose another path with --socket")
        }
        return lock
    }

    /// Creates the socket's directory if missing: 0700, or 0750 and owned by the allowed
    /// group, so that only those who may talk to the daemon can reach the socket (0755 for
    /// root without a group: its socket's own mode guards it).
    private static func prepareDirectory(for path: String, group: gid_t?) throws(DaemonStartError) {
        let directory = FileSystem.directoryName(of: path)
        do {
            guard try FileSystem.kind(at: directory) == .missing else { return }
            let mode: mode_t = group != nil ? 0o750 : (Users.effectiveUserID == 0 ? 0o755 : 0o700)
            try FileSystem.makeDirectories(directory, mode: mode)
            if let group {
                try FileSystem.setOwner(directory, uid: nil, gid: group)
                try FileSystem.setMode(directory, mode)
            }
        } catch {
            throw DaemonStartError("cannot create the socket directory \(directory): \(error); check that this user may write there, or choose another path with --socket")
        }
    }

    private static func removeStaleSocket(at path: String) throws(DaemonStartError) {
        let kind: FileSystem.Kind
        do {
            kind = try FileSystem.kind(at: path)
        } catch {
            throw DaemonStartError("cannot inspect \(path): \(error); check that this user may write there, or choose another path with --socket")
        }
        switch kind {
        case .missing:
            return
        case .socket:
            break
        default:
            throw DaemonStartError("\(path) exists and is not a socket; remove it or choose another path with --socket")
        }
        if isAnswering(path) {
            throw DaemonStartError("another stopwatchd is already running on \(path); stop it first (or use --socket for a second one)")
        }
        do {
            try FileSystem.remove(path)
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
