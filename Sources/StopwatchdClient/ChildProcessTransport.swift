import Glibc
import LinuxSystem
import StopwatchProtocol

/// A connection's bytes through a command's standard input and output, which speak varlink
/// to a daemon (the varlink bridge: `ssh HOST swctl bridge`). The command is started with
/// this process's environment, in this process's group (a terminal's Ctrl-C reaches ssh
/// too); its standard error is read as it comes, so that a chatty ssh cannot block on it,
/// and its last line is the reason given when the command fails.
///
/// Not Sendable: one thread uses it, but for `interrupt`, which `VarlinkConnection` calls
/// from another thread under its lock, never after `close` (see `VarlinkTransport`).
/// `interrupt` touches only `wakeUp` (an eventfd write, which the kernel serializes with the
/// `poll` it wakes, and which cannot meet its `close`: both run under the connection's lock)
/// and the child's pid under `termination`'s lock.
package final class ChildProcessTransport: VarlinkTransport {
    /// The command, as shown in messages.
    package let command: String
    private let child: pid_t
    /// Our ends: the child's standard input, output and error.
    private let input: FileDescriptor
    private let output: FileDescriptor
    private let errors: FileDescriptor
    /// Readable once `interrupt` ran (and for good: it is never read), in every `receive`
    /// poll: a wrapper that does not `exec` ssh leaves a grandchild holding the output pipe
    /// open after a SIGTERM, so the child's end is no wake-up to count on.
    private let wakeUp: EventDescriptor
    private var errorsOpen = true
    /// The end of what the child wrote to standard error, for its last line.
    private var errorTail: [UInt8] = []
    /// How the child ended, set once it has been reaped: its pid may then be someone
    /// else's. Locked, because `interrupt` signals the pid from another thread and must
    /// never do so after a reap.
    private let termination = Locked<ProcessSpawner.Termination?>(nil)

    /// How much of the child's standard error is kept: its last line is in there.
    private static let errorTailLimit = 4096

    /// Starts `arguments` (argv[0] looked up in `$PATH`).
    package init(arguments: [String]) throws(ClientError) {
        let command = Self.shown(arguments)
        self.command = command
        // Everything that may fail happens before the first stored descriptor: a throw
        // after that would run `deinit`, which must not close (or reap) anything twice.
        let started = try Self.start(arguments, command: command)
        child = started.child
        input = started.input
        output = started.output
        errors = started.errors
        wakeUp = started.wakeUp
    }

    private static func start(
        _ arguments: [String], command: String
    ) throws(ClientError) -> (child: pid_t, input: FileDescriptor, output: FileDescriptor, errors: FileDescriptor, wakeUp: EventDescriptor) {
        guard let name = arguments.first else { throw .bridgeFailed(command: command, reason: "no command given") }
        guard let path = ProcessSpawner.executablePath(of: name, searchPath: ProcessEnvironment.current["PATH"]) else {
            throw .bridgeFailed(command: command, reason: "'\(name)' is not found in PATH")
        }
        var opened: [FileDescriptor] = []
        do {
            // Close-on-exec, all: the child gets its ends as 0, 1, 2 through dup2.
            let input = try FileDescriptor.pipe()
            opened += [input.read, input.write]
            let output = try FileDescriptor.pipe()
            opened += [output.read, output.write]
            let errors = try FileDescriptor.pipe()
            opened += [errors.read, errors.write]
            let wakeUp = try EventDescriptor.make()
            opened.append(wakeUp.descriptor)
            let child = try ProcessSpawner.spawn(
                path: path, arguments: arguments, environment: ProcessEnvironment.all,
                standardInput: input.read, standardOutput: output.write, standardError: errors.write,
                ownProcessGroup: false
            )
            [input.read, output.write, errors.write].forEach { $0.close() }
            return (child, input.write, output.read, errors.read, wakeUp)
        } catch {
            opened.forEach { $0.close() }
            throw .bridgeFailed(command: command, reason: "cannot start '\(name)': \(error)")
        }
    }

    deinit {
        close()
    }

    package func send(_ bytes: [UInt8]) throws(ClientError) {
        do {
            // A library user may not ignore SIGPIPE: a command that went away must not kill it.
            try input.writeAllWithoutBrokenPipeSignal(bytes)
        } catch {
            throw ended(otherwise: "it stopped reading: \(error)")
        }
    }

    package func receive(upTo limit: Int, waitingAtMost wait: Duration?) throws(ClientError) -> [UInt8]? {
        let deadline = wait.map { ContinuousClock.now + $0 }
        while true {
            let left = deadline.map { max($0 - ContinuousClock.now, .zero) }
            let ready: [PollEvents]
            do {
                ready = try FileDescriptor.poll(events:
                    [(output, .readable), (wakeUp.descriptor, .readable)] + (errorsOpen ? [(errors, .readable)] : []), timeout: left
                )
            } catch {
                throw failure("\(error)")
            }
            if !ready[1].isEmpty { throw .bridgeFailed(command: command, reason: "interrupted") }
            if ready.count > 2, !ready[2].isEmpty { readErrors() }
            if !ready[0].isEmpty {
                let bytes: [UInt8]
                do {
                    bytes = try output.read(upTo: limit)
                } catch {
                    throw ended(otherwise: "reading its output failed: \(error)")
                }
                guard !bytes.isEmpty else { throw ended(otherwise: "it closed its output") }
                return bytes
            }
            if let deadline, ContinuousClock.now >= deadline { return nil }
        }
    }

    /// Keeps what the child wrote to standard error (the end of it); at its end, stops
    /// watching it.
    private func readErrors() {
        guard errorsOpen else { return }
        guard let bytes = try? errors.read(upTo: 4096), !bytes.isEmpty else {
            errorsOpen = false
            return
        }
        errorTail += bytes
        if errorTail.count > Self.errorTailLimit { errorTail.removeFirst(errorTail.count - Self.errorTailLimit) }
    }

    /// The last non-empty line the child wrote to standard error, printable, if any.
    package var lastErrorLine: String? {
        let lines = errorTail.split(separator: UInt8(ascii: "\n")).map {
            Self.trimmed(String(decoding: $0, as: UTF8.self))
        }
        guard let line = lines.last(where: { !$0.isEmpty }) else { return nil }
        return StopwatchName.printable(line)
    }

    /// The error for a child that closed its output or stopped reading: its last words on
    /// standard error, else how it ended, else `reason`. Waits a little for it to end (ssh
    /// writes its message, then exits), reading standard error meanwhile.
    private func ended(otherwise reason: String) -> ClientError {
        let deadline = ContinuousClock.now + .seconds(2)
        var ended = reapIfEnded()
        while ended == nil, ContinuousClock.now < deadline {
            if errorsOpen, (try? errors.poll(timeout: .milliseconds(20))) == true {
                readErrors()
            } else if !errorsOpen {
                CurrentProcess.sleep(for: .milliseconds(5))
            }
            ended = reapIfEnded()
        }
        // Ended: whatever it wrote is in the pipe (a process it left behind may hold the
        // pipe open for good, so only what is there now).
        while errorsOpen, (try? errors.poll(timeout: .zero)) == true { readErrors() }
        if let line = lastErrorLine { return .bridgeFailed(command: command, reason: line) }
        if let ended { return .bridgeFailed(command: command, reason: "it \(ended)") }
        return .bridgeFailed(command: command, reason: reason)
    }

    /// The command still runs (no reply in time, a daemon at its limit): `reason` is what
    /// went wrong, and its last line on standard error only a hint, which may be stale (a
    /// "Warning: Permanently added …" before a host that went silent). That line is the
    /// reason only once the command ended or closed its output (`ended`).
    package func failure(_ reason: String) -> ClientError {
        while errorsOpen, (try? errors.poll(timeout: .zero)) == true { readErrors() }
        guard let line = lastErrorLine else { return .bridgeFailed(command: command, reason: reason) }
        return .bridgeFailed(command: command, reason: "\(reason) (ssh said: \(line))")
    }

    /// How the child ended, reaping it if it has; nil while it runs.
    private func reapIfEnded() -> ProcessSpawner.Termination? {
        termination.withLock { termination in
            if termination == nil { termination = try? ProcessSpawner.reapIfEnded(child) }
            return termination
        }
    }

    package func interrupt() {
        // No shutdown(2) for pipes: the blocked `receive` is woken through `wakeUp`, and
        // the child is asked to end (as the session is).
        wakeUp.signal()
        termination.withLock { termination in
            if termination == nil { try? ProcessSpawner.signal(child, SIGTERM) }
        }
    }

    package func close() {
        guard !isClosed else { return }
        isClosed = true
        // Its input closed, ssh ends the session; the rest is ours to let go of, and no
        // zombie is left in the program using the library.
        [input, output, errors, wakeUp.descriptor].forEach { $0.close() }
        termination.withLock { termination in
            if termination == nil { termination = try? ProcessSpawner.reapIfEnded(child) }
            if termination == nil {
                // A wrapper may ignore SIGTERM (`trap '' TERM`): a close, which a key binding's
                // `swctl --host X status` makes, must not wait for it for ever.
                try? ProcessSpawner.signal(child, SIGTERM)
                termination = Self.reap(child, waitingAtMost: Self.termGrace)
            }
            if termination == nil {
                try? ProcessSpawner.signal(child, SIGKILL)
                termination = try? ProcessSpawner.reap(child)
            }
        }
    }

    /// How long a child asked to end with SIGTERM has before SIGKILL.
    private static let termGrace: Duration = .seconds(1)

    /// Reaps `child` once it ended, within `wait`; nil if it still runs then. Waits on its
    /// pidfd, or (a kernel without pidfd_open) checks every 10 ms.
    private static func reap(_ child: pid_t, waitingAtMost limit: Duration) -> ProcessSpawner.Termination? {
        let deadline = ContinuousClock.now + limit
        let pidfd = try? ProcessSpawner.openProcessDescriptor(child)
        defer { pidfd?.close() }
        while true {
            if let ended = try? ProcessSpawner.reapIfEnded(child) { return ended }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            if let pidfd {
                _ = try? pidfd.poll(timeout: left)
            } else {
                CurrentProcess.sleep(for: min(left, .milliseconds(10)))
            }
        }
    }

    /// Set by the first `close` (the connection's, or `deinit`'s).
    private var isClosed = false

    /// `text` without leading and trailing spaces, tabs and carriage returns.
    private static func trimmed(_ text: String) -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = text.firstIndex(where: { !blank($0) }), let last = text.lastIndex(where: { !blank($0) }) else { return "" }
        return String(text[first...last])
    }

    /// One line for messages: the arguments, each quoted when it holds a space or a quote.
    package static func shown(_ arguments: [String]) -> String {
        arguments.map { argument in
            argument.isEmpty || argument.contains(where: { $0 == " " || $0 == "'" || $0 == "\"" || $0 == "\t" })
                ? "\"" + argument + "\"" : argument
        }.joined(separator: " ")
    }
}
