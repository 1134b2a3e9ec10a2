import Glibc
import LinuxSystem
import StopwatchProtocol

/// One run of a hook (SPEC §4): started with `posix_spawn` in a process group of its own,
/// its standard input the event's JSON in a memory file (never a pipe it might not read),
/// its standard output and error one pipe; then watched by `supervise` on a thread of the
/// runner's until it ends.
///
/// The run ends when the hook's own process ends; what is in the pipe then is read without
/// waiting for its end, so a grandchild holding the pipe cannot keep the run going. What the
/// hook left in its process group is then killed (SIGKILL, before the hook is reaped, so the
/// group's id cannot be someone else's yet) when the run was stopped for its timeout, or when
/// something still holds the hook's output: a job started in the background with the hook's
/// output, which is no longer read. What the hook started with its output sent elsewhere,
/// before it forked it (`exec >/dev/null 2>&1`, then `job &`), is left running: the rule
/// reads only the pipe's state once the hook has ended, so no ordering between the hook's
/// exit and its job's start can change it (unlike `setsid job &`, whose setsid may come
/// after the kill). A run's pipe is given to no other hook, not even for the instant a
/// spawn lasts (`spawning`), so its writers are the hook's own.
final class HookProcess: Sendable {
    /// Held while a hook is spawned, from its pipe's creation to the close of our write end,
    /// and while a run looks whether its pipe still has writers: a hook spawned meanwhile
    /// holds a copy of every descriptor of the daemon (close-on-exec, so until its exec),
    /// another run's pipe included. It guards no value: `false` only because a `Locked`
    /// needs one with a size (see there).
    private static let spawning = Locked(false)

    /// "hook notify (expired of 'tea')": how the log names this run.
    let label: String
    let pid: pid_t
    /// The read end of the hook's standard output and error (non-blocking).
    private let output: FileDescriptor
    /// Polls readable once the hook has ended; nil on a kernel without `pidfd_open`, where
    /// the end is polled for instead.
    private let processDescriptor: FileDescriptor?

    private init(label: String, pid: pid_t, output: FileDescriptor, processDescriptor: FileDescriptor?) {
        self.label = label
        self.pid = pid
        self.output = output
        self.processDescriptor = processDescriptor
    }

    /// Starts `executable` (opened by `HookDirectory.open`, closed here) as
    /// `/proc/self/fd/3`: what was checked is what runs. `name` is its `argv[0]`.
    static func spawn(
        label: String,
        name: String,
        executable: FileDescriptor,
        environment: [String],
        input: [UInt8]
    ) throws(Errno) -> HookProcess {
        defer { executable.close() }
        let standardInput = try FileDescriptor.memoryFile(named: "stopwatchd-hook-input", containing: input)
        defer { standardInput.close() }
        let (pid, output) = try spawning.withLock { _ throws(Errno) -> (pid_t, FileDescriptor) in
            let pipe = try FileDescriptor.pipe()
            do throws(Errno) {
                defer { pipe.write.close() }
                try pipe.read.setNonBlocking()
                let pid = try ProcessSpawner.spawn(
                    path: "/proc/self/fd/3",
                    arguments: [name],
                    environment: environment,
                    standardInput: standardInput,
                    standardOutput: pipe.write,
                    standardError: pipe.write,
                    extra: executable
                )
                return (pid, pipe.read)
            } catch {
                pipe.read.close()
                throw error
            }
        }
        return HookProcess(label: label, pid: pid, output: output, processDescriptor: try? ProcessSpawner.openProcessDescriptor(pid))
    }

    /// Whether anything still holds the write end of the hook's output pipe (the hook itself
    /// has ended): something it left, since no spawn is under way meanwhile.
    private func outputStillHeld() -> Bool {
        Self.spawning.withLock { _ in
            guard let events = try? FileDescriptor.poll(events: [(output, [])], timeout: .zero).first else { return true }
            return !events.contains(.hangUp)
        }
    }

    /// Watches the run until the hook ends, blocking the calling thread: logs its output
    /// (bounded, `HookOutput`), stops it after `timeout` (SIGTERM to its group, SIGKILL
    /// `grace` later), kills what it left in its group when it timed out or something still
    /// holds its output, reaps it and logs a failure. Call once.
    func supervise(timeout: Duration, grace: Duration, output limits: HookOutput, logger: Logger) {
        let start = ContinuousClock.now
        var deadline = HookTimeout(timeout: timeout, grace: grace)
        var text = limits
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var pipeOpen = true
        defer {
            if pipeOpen { output.close() }
            processDescriptor?.close()
        }

        /// Reads what is in the pipe now, 1 MiB at the most, so that hooks refilling it as
        /// fast as it is read cannot hold off their timeout; false at its end.
        func readOutput() -> Bool {
            for _ in 0..<16 {
                let result = buffer.withUnsafeMutableBytes { bytes in
                    Result { () throws(Errno) -> Int in try output.read(into: bytes) }
                }
                switch result {
                case .success(0):
                    return false
                case .success(let count):
                    for line in text.append(buffer[..<count]) { logger.info("\(label): \(line)") }
                case .failure(let error) where error == .wouldBlock:
                    return true
                case .failure(let error):
                    logger.warning("\(label): cannot read its output: \(error)")
                    return false
                }
            }
            return true
        }

        var ended = false
        while !ended {
            let elapsed = ContinuousClock.now - start
            switch deadline.check(elapsed: elapsed) {
            case .terminate?:
                logger.warning("\(label) still runs after \(DurationText.string(timeout)): SIGTERM to its process group")
                try? ProcessSpawner.signalGroup(pid, SIGTERM)
            case .kill?:
                logger.warning("\(label) still runs \(DurationText.string(grace)) after SIGTERM: SIGKILL to its process group")
                try? ProcessSpawner.signalGroup(pid, SIGKILL)
            case nil:
                break
            }
            var wait = deadline.nextCheck.map { $0 - (ContinuousClock.now - start) }
            // Without a process descriptor, its end is looked for every 50 ms.
            if processDescriptor == nil { wait = min(wait ?? .milliseconds(50), .milliseconds(50)) }
            let watched = (pipeOpen ? [output] : []) + (processDescriptor.map { [$0] } ?? [])
            let ready: [Bool]
            do {
                ready = watched.isEmpty ? [] : try FileDescriptor.poll(watched, timeout: wait)
            } catch {
                // Not expected (EINVAL, ENOMEM): look again shortly rather than spin.
                logger.warning("\(label): cannot wait for it: \(error)")
                ready = Array(repeating: false, count: watched.count)
                _ = try? FileDescriptor.poll([], timeout: .milliseconds(50))
            }
            if pipeOpen, ready.first == true, !readOutput() {
                output.close()
                pipeOpen = false
            }
            if let processDescriptor {
                ended = ready.last == true && watched.last == processDescriptor
            } else {
                ended = (try? ProcessSpawner.hasEnded(pid)) ?? true
            }
        }
        // Ended, not yet reaped: its group's id is still its own. (A pipe read to its end has
        // no writer left.)
        if deadline.hasTimedOut || (pipeOpen && outputStillHeld()) {
            try? ProcessSpawner.signalGroup(pid, SIGKILL)
        }
        if pipeOpen {
            _ = readOutput()
        }
        for line in text.finish() { logger.info("\(label): \(line)") }
        if text.droppedBytes > 0 {
            logger.info("\(label): \(text.droppedBytes) more bytes of output not logged")
        }
        let termination: ProcessSpawner.Termination
        do {
            termination = try ProcessSpawner.reap(pid)
        } catch {
            logger.warning("\(label): cannot reap process \(pid): \(error)")
            return
        }
        let took = DurationText.string(ContinuousClock.now - start)
        switch termination {
        case .exited(0) where !deadline.hasTimedOut:
            logger.debug("\(label) succeeded in \(took)")
        case _ where deadline.hasTimedOut:
            logger.warning("\(label) was stopped after \(took) (timeout \(DurationText.string(timeout))): \(termination)")
        default:
            logger.warning("\(label) failed: \(termination)")
        }
    }
}
