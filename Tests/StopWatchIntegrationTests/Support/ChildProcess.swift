import Foundation
import LinuxSystem

/// A child process started with `posix_spawn` and reaped with `waitpid`, every wait with a
/// deadline. (Foundation's `Process` was seen to miss a child's exit under ThreadSanitizer
/// and wait for ever, leaving a zombie.)
final class ChildProcess: @unchecked Sendable {
    // @unchecked Sendable: `exitStatus` is only touched under `lock`; the rest is immutable.
    let pid: pid_t
    /// Read ends of the child's standard output and error, when captured.
    let output: FileDescriptor?
    let error: FileDescriptor?
    private let lock = Locked<Status?>(nil)
    private let outputClosed = Locked(false)

    enum Status: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)
    }

    init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String],
        captureOutput: Bool = false,
        captureError: Bool = false,
        blockedSignals: [Int32] = []
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)

        func pipe(into target: CInt, capture: Bool) throws -> SpawnPipe? {
            guard capture else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
                return nil
            }
            var ends: [CInt] = [0, 0]
            guard pipeClosedOnExec(&ends, O_CLOEXEC) == 0 else { throw Errno(errno) }
            posix_spawn_file_actions_adddup2(&actions, ends[1], target)
            return FileDescriptor(rawValue: ends[0]).withWriteEnd(ends[1])
        }
        let outputPipe = try pipe(into: 1, capture: captureOutput)
        let errorPipe = try pipe(into: 2, capture: captureError)
        // Nothing else of ours (after the dup2s, which read the pipes' ends): tests run in
        // parallel, and a descriptor another test holds without close-on-exec (a hook script
        // it is writing, say) would stay open in this child for its whole life; exec of that
        // script then fails with ETXTBSY.
        _ = spawnClosesFrom(&actions, 3)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        // The test thread's signal mask and dispositions are not the child's: it starts as
        // from a shell, so SIGTERM ends it (unless the test blocks signals on purpose).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in blockedSignals { sigaddset(&signals, signal) }
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigemptyset(&signals)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT] { sigaddset(&signals, signal) }
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        // The child has its copies of the write ends; ours must go so reads see EOF.
        for pipe in [outputPipe, errorPipe] { pipe?.closeWriteEnd() }
        guard result == 0 else {
            outputPipe?.descriptor.close()
            errorPipe?.descriptor.close()
            throw Errno(result)
        }
        self.pid = pid
        self.output = outputPipe?.descriptor
        self.error = errorPipe?.descriptor
    }

    deinit {
        if status == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: .seconds(30))
        }
        closeOutput()
        error?.close()
    }

    /// Closes our end of the child's standard output: it then writes to a pipe nobody reads.
    /// Once only, whoever calls it first (a test, or deinit).
    func closeOutput() {
        outputClosed.withLock { closed in
            guard !closed else { return }
            closed = true
            output?.close()
        }
    }

    /// How it ended, or nil while it runs (reaps it if it has ended).
    var status: Status? {
        lock.withLock { status in
            if status == nil {
                var raw: CInt = 0
                if waitpid(pid, &raw, WNOHANG) == pid { status = Self.decode(raw) }
            }
            return status
        }
    }

    var isRunning: Bool { status == nil }

    func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Waits up to `timeout` for the end; nil if it is still running then.
    func wait(timeout: Duration = .seconds(60)) -> Status? {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if let status { return status }
            usleep(2_000)
        }
        return status
    }

    /// `WIFEXITED`/`WEXITSTATUS`/`WTERMSIG`, which are C macros Swift cannot call.
    private static func decode(_ raw: CInt) -> Status {
        raw & 0x7F == 0 ? .exited((raw >> 8) & 0xFF) : .signaled(raw & 0x7F)
    }

    /// Runs `executable` to the end and returns its exit status (128 + signal for a death by
    /// signal, -1 if it outlives `timeout`) and what it wrote to each output.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String], timeout: Duration = .seconds(60)
    ) throws -> (status: Int32, output: String, error: String) {
        let child = try ChildProcess(executable, arguments, environment: environment, captureOutput: true, captureError: true)
        // Both pipes at once: a child filling one while we wait on the other would stall.
        let error = Locked("")
        let errorRead = DispatchSemaphore(value: 0)
        // A thread of its own, not one from libdispatch's pool, where every daemon's log
        // reader waits while it runs (see `DaemonProcess`).
        Thread.detachNewThread {
            let text = child.error.map { readAll($0, timeout: timeout) } ?? ""
            error.withLock { $0 = text }
            errorRead.signal()
        }
        let output = child.output.map { readAll($0, timeout: timeout) } ?? ""
        _ = errorRead.wait(timeout: .now() + .seconds(Int(timeout.components.seconds)))
        let status: Int32 = switch child.wait(timeout: timeout) {
        case .exited(let status)?: status
        case .signaled(let signal)?: 128 + signal
        case nil: -1
        }
        return (status, output, error.withLock { $0 })
    }

    /// Everything the child writes to `descriptor` until it closes it (or `timeout`).
    static func readAll(_ descriptor: FileDescriptor, timeout: Duration = .seconds(60)) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end, (try? descriptor.poll(timeout: end - ContinuousClock.now)) == true {
            let count = (try? chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }) ?? 0
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// `pipe2`, which Glibc's module hides behind `_GNU_SOURCE`. Atomic close-on-exec matters
/// here: tests spawn in parallel, and a write end leaked into another child would keep a
/// pipe open long after its own child ended.
@_silgen_name("pipe2")
private func pipeClosedOnExec(_ ends: UnsafeMutablePointer<CInt>, _ flags: CInt) -> CInt

/// A pipe's read end, carrying its write end until the child has been spawned.
private struct SpawnPipe {
    let descriptor: FileDescriptor
    let writeEnd: CInt

    func closeWriteEnd() { _ = Glibc.close(writeEnd) }
}

extension FileDescriptor {
    fileprivate func withWriteEnd(_ writeEnd: CInt) -> SpawnPipe {
        SpawnPipe(descriptor: self, writeEnd: writeEnd)
    }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which the Glibc module does not
/// export: the child closes every descriptor from `lowest` on before it runs the program.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
func spawnClosesFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: CInt) -> CInt
