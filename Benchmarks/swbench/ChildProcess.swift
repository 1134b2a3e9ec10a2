import Glibc
import LinuxSystem

/// A program started with `posix_spawn` and reaped with `waitpid`.
final class ChildProcess {
    let pid: pid_t
    private var exitStatus: CInt?

    /// Starts `executable` with `arguments` and exactly `environment`; its standard input
    /// is /dev/null, its standard output and error are appended to the files named.
    /// `inherited` stay open in it under their own numbers (everything else swbench opens is
    /// close-on-exec).
    init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = ["PATH": "/usr/bin:/bin"],
        outputPath: String = "/dev/null",
        errorPath: String = "/dev/null",
        inherited: [FileDescriptor] = []
    ) throws(Errno) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        // A dup2 onto itself clears close-on-exec in the child alone (POSIX, Austin Group
        // issue 411; glibc since 2.29).
        for descriptor in inherited { posix_spawn_file_actions_adddup2(&actions, descriptor.rawValue, descriptor.rawValue) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard result == 0 else { throw Errno(result) }
        self.pid = pid
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            _ = waitForExit()
        }
    }

    /// Whether it still runs (reaps it if it has ended).
    var isRunning: Bool {
        guard exitStatus == nil else { return false }
        var raw: CInt = 0
        if waitpid(pid, &raw, WNOHANG) == pid { exitStatus = raw }
        return exitStatus == nil
    }

    /// Waits for the end; the exit status, or 128 + the signal that ended it.
    @discardableResult
    func waitForExit() -> CInt {
        while exitStatus == nil {
            var raw: CInt = 0
            let result = waitpid(pid, &raw, 0)
            if result == pid { exitStatus = raw } else if errno != EINTR { exitStatus = -1 }
        }
        let raw = exitStatus!
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which are macros Swift cannot call.
        return raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
    }

    /// Sends `signal`, waits up to `grace` for the end, then kills it.
    @discardableResult
    func stop(_ signal: CInt = SIGTERM, grace: Duration = .seconds(10)) -> CInt {
        guard isRunning else { return waitForExit() }
        kill(pid, signal)
        let deadline = Now.boot() + grace
        while isRunning, Now.boot() < deadline { CurrentProcess.sleep(for: .milliseconds(2)) }
        if isRunning { kill(pid, SIGKILL) }
        return waitForExit()
    }

    /// Runs `executable` to its end and returns how long that took, from just before the
    /// spawn to just after `waitpid` returned, and its exit status.
    static func timedRun(_ executable: String, _ arguments: [String]) throws(Errno) -> (time: Duration, status: CInt) {
        let start = Now.boot()
        let child = try ChildProcess(executable, arguments)
        let status = child.waitForExit()
        return (Now.boot() - start, status)
    }

    /// The start of what a child wrote to `path` (its output or error file), for a message
    /// saying why it failed; empty when there is none.
    static func logText(at path: String) -> String {
        ((try? FileSystem.contents(of: path, limit: 2_000)) ?? []).withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    }
}
