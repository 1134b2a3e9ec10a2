import CLinux
import Glibc

/// Starting programs with `posix_spawn` (never through a shell), signalling their process
/// groups and reaping them.
package enum ProcessSpawner {
    /// How a child ended.
    package enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(CInt)
        case signaled(CInt)

        package var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signaled(let signal): "killed by \(Signals.name(of: signal))"
            }
        }
    }

    /// Starts `path` with `arguments` (argv[0] first) and `environment` ("NAME=value"
    /// strings), in a process group of its own (its id is the child's pid) unless
    /// `ownProcessGroup` is false (then in ours, so a terminal's Ctrl-C reaches it too), with every
    /// signal's default action and an empty signal mask (the daemon ignores SIGPIPE and the
    /// signals it handles, and an ignored signal would stay ignored across exec).
    ///
    /// The child's standard input, output and error are `standardInput`, `standardOutput`
    /// and `standardError`; `extra`, when given, is its descriptor 3, left open across exec
    /// (to run a file opened beforehand as `/proc/self/fd/3`). Every other descriptor of the
    /// daemon is close-on-exec. None of the given descriptors may be 0, 1 or 2 of this
    /// process: they are duplicated onto 0, 1, 2, then 3, in that order.
    package static func spawn(
        path: String,
        arguments: [String],
        environment: [String],
        standardInput: FileDescriptor,
        standardOutput: FileDescriptor,
        standardError: FileDescriptor,
        extra: FileDescriptor? = nil,
        ownProcessGroup: Bool = true
    ) throws(Errno) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        try Posix.check(posix_spawn_file_actions_init(&actions))
        defer { posix_spawn_file_actions_destroy(&actions) }
        try Posix.check(posix_spawn_file_actions_adddup2(&actions, standardInput.rawValue, STDIN_FILENO))
        try Posix.check(posix_spawn_file_actions_adddup2(&actions, standardOutput.rawValue, STDOUT_FILENO))
        try Posix.check(posix_spawn_file_actions_adddup2(&actions, standardError.rawValue, STDERR_FILENO))
        if let extra {
            // dup2 onto itself (when it already is 3) clears close-on-exec too (glibc ≥ 2.29).
            try Posix.check(posix_spawn_file_actions_adddup2(&actions, extra.rawValue, 3))
        }

        var attributes = posix_spawnattr_t()
        try Posix.check(posix_spawnattr_init(&attributes))
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        var none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        try Posix.check(posix_spawnattr_setsigdefault(&attributes, &all))
        try Posix.check(posix_spawnattr_setsigmask(&attributes, &none))
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        if ownProcessGroup {
            try Posix.check(posix_spawnattr_setpgroup(&attributes, 0))
            flags |= POSIX_SPAWN_SETPGROUP
        }
        try Posix.check(posix_spawnattr_setflags(&attributes, Int16(flags)))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        // posix_spawn returns the error number; EINTR does not happen (it waits for the
        // child's exec or failure itself).
        try Posix.check(posix_spawn(&pid, path, &actions, &attributes, argv, envp))
        return pid
    }

    /// Where `name` is as a program: itself when it holds a slash, else the first executable
    /// file of that name in `searchPath`'s folders (colon-separated, as `$PATH`; an empty
    /// entry is the current folder). Nil when there is none.
    package static func executablePath(of name: String, searchPath: String?) -> String? {
        guard !name.isEmpty else { return nil }
        if name.contains("/") { return name }
        for folder in (searchPath ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = folder.isEmpty ? name : "\(folder)/\(name)"
            var info = stat()
            // A folder is executable too, and cannot be run.
            if access(candidate, X_OK) == 0, stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                return candidate
            }
        }
        return nil
    }

    /// Sends `signal` to child `pid` alone (not yet reaped, so the pid is still its own).
    package static func signal(_ pid: pid_t, _ signal: CInt) throws(Errno) {
        do {
            try Posix.call { kill(pid, signal) }
        } catch where error == Errno(ESRCH) {}
    }

    /// Reaps child `pid` if it has ended; nil, without waiting, while it runs.
    package static func reapIfEnded(_ pid: pid_t) throws(Errno) -> Termination? {
        var raw: CInt = 0
        guard try Posix.call({ waitpid(pid, &raw, WNOHANG) }) == pid else { return nil }
        return Self.termination(raw)
    }

    /// Sends `signal` to every process in process group `group`. A group with nobody left
    /// in it is fine.
    package static func signalGroup(_ group: pid_t, _ signal: CInt) throws(Errno) {
        do {
            try Posix.call { killpg(group, signal) }
        } catch where error == Errno(ESRCH) {}
    }

    /// Whether child `pid` has ended, without reaping it: its pid and process group stay
    /// reserved until `reap`, so signalling the group cannot reach someone else's.
    package static func hasEnded(_ pid: pid_t) throws(Errno) -> Bool {
        var info = siginfo_t()
        try Posix.call { waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) }
        // With WNOHANG and nobody ended, waitid returns 0 and leaves si_pid 0.
        return info._sifields._sigchld.si_pid == pid
    }

    /// Waits for child `pid` to end, and reaps it.
    package static func reap(_ pid: pid_t) throws(Errno) -> Termination {
        var raw: CInt = 0
        try Posix.call { waitpid(pid, &raw, 0) }
        return termination(raw)
    }

    /// A `waitpid` status decoded: WIFEXITED/WEXITSTATUS/WTERMSIG are C macros Swift cannot call.
    private static func termination(_ raw: CInt) -> Termination {
        raw & 0x7F == 0 ? .exited((raw >> 8) & 0xFF) : .signaled(raw & 0x7F)
    }

    /// A descriptor that polls readable once child `pid` has ended (`pidfd_open`, Linux 5.3).
    package static func openProcessDescriptor(_ pid: pid_t) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try Posix.call { clinux_pidfd_open(pid) })
    }
}
