import LinuxSystem

/// The state directory (`--state-dir`) and its `stopwatches/`: opened once and kept, each
/// checked against `DirectoryTrust`, and the state directory locked so that one daemon at a
/// time uses it. Every stopwatch file is reached through the descriptor of `stopwatches/`,
/// never by path.
///
/// Not thread-safe: it belongs to the `StateStore` that owns it, on the server's queue.
final class StateDirectory {
    /// Why opening the directories failed.
    enum OpenFailure: Error {
        /// Not to be used at all (not trusted, or another daemon's): the daemon must not start.
        case refused(String)
        /// Cannot be made or opened now (permissions, read-only, a file in the way): the
        /// daemon starts and keeps trying, as for any write that fails.
        case unavailable(String, Errno)

        /// As an `Errno`, for a caller that reports one: EPERM when refused.
        var errno: Errno {
            switch self {
            case .refused: .notPermitted
            case .unavailable(_, let errno): errno
            }
        }
    }

    static let lockName = "stopwatchd.lock"
    static let subdirectoryName = "stopwatches"
    static let historyName = "history"

    /// The state directory, which holds the lock and `stopwatches/`.
    let path: String
    /// Where the stopwatch files are: `stopwatches/` in the state directory.
    let stopwatchesPath: String
    private let trust: DirectoryTrust

    private var stateDescriptor: DirectoryDescriptor?
    private var lock: FileDescriptor?
    private var stopwatchesDescriptor: DirectoryDescriptor?

    init(path: String, trust: DirectoryTrust) {
        self.path = path
        self.stopwatchesPath = path + "/" + Self.subdirectoryName
        self.trust = trust
    }

    /// `stopwatches/`, to read and write: opens the state directory (making it 0700 if
    /// missing), checks it, takes its lock, then opens `stopwatches/` the same way. What is
    /// already open stays open, and is returned as it is.
    func openStopwatches() throws(OpenFailure) -> DirectoryDescriptor {
        if let stopwatchesDescriptor { return stopwatchesDescriptor }
        let state: DirectoryDescriptor
        if let stateDescriptor {
            state = stateDescriptor
        } else {
            state = try openState(creating: true)
            stateDescriptor = state
        }
        if lock == nil {
            let outcome: LockFile.Outcome
            do {
                outcome = try LockFile.take(Self.lockName, in: state)
            } catch {
                throw .unavailable("cannot lock \(path)/\(Self.lockName): \(error)", error)
            }
            switch outcome {
            case .locked(let file): lock = file
            case .held:
                throw .refused("another stopwatchd uses the state directory \(path); stop it first, or give this one another --state-dir")
            }
        }
        let stopwatches = try openTrusted(Self.subdirectoryName) { () throws(Errno) in
            try state.openDirectory(Self.subdirectoryName, creatingWith: 0o700)
        }
        stopwatchesDescriptor = stopwatches
        return stopwatches
    }

    /// `history/`, to write: made 0700 if missing and checked as `stopwatches/` is, once the
    /// state directory is open and locked (tried again here, as a save does, while it is
    /// not). Not kept: the caller owns it. Throws why the state directory cannot be opened
    /// or locked, if it cannot.
    func openHistory() throws(Errno) -> DirectoryDescriptor {
        if lock == nil {
            do {
                _ = try openStopwatches()
            } catch where lock == nil {
                throw error.errno
            } catch {
                // Locked, but `stopwatches/` cannot be opened: no matter for `history/`.
            }
        }
        guard let state = stateDescriptor else { preconditionFailure("the state directory locked but not open") }
        do {
            return try openTrusted(Self.historyName) { () throws(Errno) in
                try state.openDirectory(Self.historyName, creatingWith: 0o700)
            }
        } catch {
            throw error.errno
        }
    }

    /// `history/`, only to read what is there, when `openHistory` fails (a read-only file
    /// system, a state directory that cannot be locked): neither made nor locked, checked
    /// as `stopwatches/` is, and not kept (the caller closes it). Throws ENOENT only when
    /// there is no history: no `history/`, or no state directory at all.
    func openHistoryToRead() throws(Errno) -> DirectoryDescriptor {
        do {
            guard let state = stateDescriptor else {
                return try openState(creating: false).closeAfter { (state) throws(OpenFailure) in
                    try openTrusted(Self.historyName) { () throws(Errno) in try state.openDirectory(Self.historyName) }
                }
            }
            return try openTrusted(Self.historyName) { () throws(Errno) in try state.openDirectory(Self.historyName) }
        } catch {
            throw error.errno
        }
    }

    /// The state directory itself, again, for the outbox (`EventOutbox`, which keeps its
    /// file there) and the history's record (`OwnFolderGuard`), once it is open and locked (`openStopwatches`). Not kept: the caller
    /// owns it.
    func openForOutbox() throws(Errno) -> DirectoryDescriptor {
        guard let state = stateDescriptor, lock != nil else { throw .noEntry }
        return try state.openDirectory(".")
    }

    /// `stopwatches/`, only to read what is there, when `openStopwatches` failed as
    /// unavailable: neither made nor locked, and not kept (the caller closes it). Nil when
    /// the state directory itself could not be opened.
    func openStopwatchesToRead() throws(OpenFailure) -> DirectoryDescriptor? {
        guard let state = stateDescriptor else { return nil }
        return try openTrusted(Self.subdirectoryName) { () throws(Errno) in
            try state.openDirectory(Self.subdirectoryName)
        }
    }

    /// Forgets `stopwatches/` after it went away, so that the next `openStopwatches` makes
    /// it again.
    func forgetStopwatches() {
        stopwatchesDescriptor?.close()
        stopwatchesDescriptor = nil
    }

    /// The state directory, checked; made 0700 first if missing when `creating`.
    private func openState(creating: Bool) throws(OpenFailure) -> DirectoryDescriptor {
        try openTrusted { () throws(Errno) in
            do throws(Errno) {
                return creating ? try DirectoryDescriptor.open(path, creatingWith: 0o700) : try DirectoryDescriptor.open(path)
            } catch where error == .tooManyLinks {
                // systemd's DynamicUser= makes /var/lib/NAME a link to /var/lib/private/NAME:
                // a link its owner (root, or this user) made is followed once, here; what it
                // leads to is opened without following anything further, and checked.
                let link = try FileSystem.ownerAndMode(at: path)
                guard link.uid == trust.userID || link.uid == 0 else { throw error }
                return try DirectoryDescriptor.open(try FileSystem.resolvedPath(path))
            }
        }
    }

    /// Opens a directory with `open` and checks it: `name` in the state directory, or the
    /// state directory itself when nil.
    private func openTrusted(
        _ name: String? = nil,
        _ open: () throws(Errno) -> DirectoryDescriptor
    ) throws(OpenFailure) -> DirectoryDescriptor {
        let path = name.map { "\(self.path)/\($0)" } ?? self.path
        let opened: DirectoryDescriptor
        do {
            opened = try open()
        } catch where error == .tooManyLinks {
            throw .refused("\(path) is a symbolic link the daemon does not follow (only the state directory itself may be one, owned by this user or root); give the directory it points to")
        } catch {
            throw .unavailable("cannot open the state directory \(path): \(error)", error)
        }
        let status: FileStatus
        do {
            status = try opened.status()
        } catch {
            opened.close()
            throw .unavailable("cannot inspect the state directory \(path): \(error)", error)
        }
        if let problem = trust.problem(with: status, path: path) {
            opened.close()
            throw .refused("refusing the state directory: \(problem)")
        }
        return opened
    }

    deinit {
        stopwatchesDescriptor?.close()
        stateDescriptor?.close()
        // Released at once, even while a child being spawned elsewhere in this process still
        // shares the descriptor (close-on-exec closes it only at its exec).
        lock?.unlock()
        lock?.close()
    }
}
