import Foundation
import LinuxSystem
import StopwatchdClient
import Testing

/// A running `stopwatchd`, started for one test and stopped with it.
///
/// Its standard error is read as it comes (a pipe nobody reads would fill and block the
/// daemon), and when the test lets go of it the daemon is stopped with SIGTERM and must exit
/// 0 with no sanitizer report in its log.
final class DaemonProcess {
    let child: ChildProcess
    let socket: String
    private let log = Locked("")
    private let logComplete = DispatchSemaphore(value: 0)

    /// Starts `stopwatchd --socket socket` with `arguments` and waits until it answers.
    /// - Parameters:
    ///   - passSocket: false to leave the socket to the daemon's own resolution.
    ///   - launcher: a program that runs the daemon, e.g. `["/usr/bin/nohup"]`.
    ///   - blockedSignals: the signal mask it starts with (as a careless parent leaves it).
    init(
        socket: String,
        arguments: [String] = [],
        environment: [String: String] = [:],
        passSocket: Bool = true,
        waitUntilReady: Bool = true,
        launcher: [String] = [],
        blockedSignals: [Int32] = []
    ) throws {
        self.socket = socket
        // Its own state, beside its socket, unless the test chose one.
        let state = arguments.contains("--state-dir") ? [] : ["--state-dir", Self.stateDirectory(for: socket)]
        let command = launcher + [Binaries.stopwatchd] + (passSocket ? ["--socket", socket] : []) + state + arguments
        child = try ChildProcess(
            command[0],
            Array(command.dropFirst()),
            environment: Binaries.childEnvironment.merging(environment) { $1 },
            captureError: true,
            blockedSignals: blockedSignals
        )
        if let error = child.error {
            let log = self.log, complete = logComplete
            // A thread of its own, held until the daemon ends: from libdispatch's pool, with
            // dozens of daemons alive in a sanitizer run, the reader of one that failed at
            // once waited more than the 10 s `readLog` allows, and its log read as empty.
            Thread.detachNewThread {
                var chunk = [UInt8](repeating: 0, count: 4096)
                while (try? error.poll(timeout: nil)) == true {
                    let count = (try? chunk.withUnsafeMutableBytes { try error.read(into: $0) }) ?? 0
                    if count == 0 { break }
                    log.withLock { $0 += String(decoding: chunk[..<count], as: UTF8.self) }
                }
                complete.signal()
            }
        }
        if waitUntilReady {
            // Any answer means it serves: a refusal of a name nobody uses is cheap, where a
            // List of ten thousand countdowns under a sanitizer took longer than the 2 s
            // each try allows, and the daemon never read as ready.
            let ready = Deadline.wait { Self.answers(on: socket) || !child.isRunning }
            guard ready, child.isRunning else {
                throw DaemonFailed(message: "stopwatchd did not become ready: \(readLog())")
            }
        }
    }

    /// Whether a daemon on `socket` answers a call, whatever the answer.
    static func answers(on socket: String) -> Bool {
        do {
            _ = try StopwatchClient(socketPath: socket, timeout: .seconds(2)).get("readiness-probe")
            return true
        } catch .refused {
            return true
        } catch {
            return false
        }
    }

    struct DaemonFailed: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// Where a daemon on `socket` keeps its stopwatches in these tests.
    static func stateDirectory(for socket: String) -> String {
        URL(fileURLWithPath: socket).deletingLastPathComponent().appendingPathComponent("state").path
    }

    var pid: pid_t { child.pid }
    var isRunning: Bool { child.isRunning }

    /// Sends `signal` and waits for the exit; returns the exit status, or 128 + the signal
    /// for a death by signal, as a shell does.
    @discardableResult
    func stop(_ signal: Int32 = SIGTERM) -> Int32 {
        child.signal(signal)
        guard let status = waitForExit() else {
            // Seen once in CI (a SIGTERM after a wall-clock step, nothing logged after it, not
            // reproduced since): what the daemon was doing is recorded, for the next time.
            Issue.record("stopwatchd (\(pid)) still runs 60 s after signal \(signal):\n\(Self.threads(of: pid))\n\(Self.descriptors(of: pid))")
            return -1
        }
        return status
    }

    /// Each open descriptor of `pid` and what it is (a file's path, `socket:[…]`,
    /// `anon_inode:[signalfd]`…): whether libdispatch's signalfd is still there, say.
    static func descriptors(of pid: pid_t) -> String {
        let numbers = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).compactMap { Int($0) }.sorted()
        return "descriptors:\n" + numbers.map { number in
            "  \(number) -> " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(number)")) ?? "?")
        }.joined(separator: "\n")
    }

    /// What the kernel says of each thread of `pid`: its name, state, where it waits, its
    /// signals (pending, blocked, caught) and, when readable (root), its kernel stack.
    static func threads(of pid: pid_t) -> String {
        func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        let signalFields = ["State:", "SigQ:", "SigPnd:", "ShdPnd:", "SigBlk:", "SigIgn:", "SigCgt:"]
        let tasks = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }
        return tasks.map { task in
            let base = "/proc/\(pid)/task/\(task)"
            let status = read(base + "/status").split(separator: "\n").filter { line in signalFields.contains { line.hasPrefix($0) } }
            let stack = read(base + "/stack").split(separator: "\n").prefix(12).map { "    " + $0 }
            return (["thread \(task) \(read(base + "/comm").trimmingCharacters(in: .whitespacesAndNewlines)) wchan \(read(base + "/wchan"))"]
                + status.map { "  " + $0 } + stack).joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Waits for the daemon to end on its own; its exit status as `stop` gives it, nil if
    /// it still runs after `timeout`.
    func waitForExit(timeout: Duration = .seconds(60)) -> Int32? {
        switch child.wait(timeout: timeout) {
        case .exited(let status)?: status
        case .signaled(let signal)?: 128 + signal
        case nil: nil
        }
    }

    /// Whether the daemon logs `text` within `timeout` (its log is read as it comes).
    func waitForLog(containing text: String, timeout: Duration = .seconds(20)) -> Bool {
        Deadline.wait(timeout) { readLog().contains(text) }
    }

    /// What the daemon wrote to standard error so far (all of it, once it has exited).
    func readLog() -> String {
        if !child.isRunning {
            _ = logComplete.wait(timeout: .now() + 10)
            logComplete.signal()
        }
        return log.withLock { $0 }
    }

    deinit {
        // One that already ended was stopped or failed on purpose, and its test looked at
        // why; but a crash (no test sends these signals) is always a failure, wherever it came.
        if case .signaled(let signal)? = child.wait(timeout: .zero), [SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGTRAP].contains(signal) {
            Issue.record("stopwatchd crashed with signal \(signal); log:\n\(readLog())")
        } else if child.isRunning {
            let status = stop(SIGTERM)
            let log = readLog()
            if status != 0 || log.contains("Sanitizer") {
                // A daemon stopped for the test must stop cleanly, and with nothing for a sanitizer to say.
                Issue.record("stopwatchd exited \(status) on SIGTERM; log:\n\(log)")
            }
        }
        // The log reader must be done with the pipe before `child` closes it: a reader left
        // polling a closed descriptor's number would read whatever file takes that number next.
        _ = readLog()
    }
}
