import Glibc
import LinuxSystem

/// A `stopwatchd` started by swbench in a directory of its own (socket, state, log, notify
/// socket), timed from its exec to its `READY=1`.
final class DaemonUnderTest {
    let process: ChildProcess
    let socketPath: String
    /// Its `--state-dir`: the stopwatches are in `stopwatches/` under it.
    let stateDirectory: String
    let logPath: String
    /// From just before `posix_spawn` to the arrival of `READY=1`.
    let timeToReady: Duration

    var pid: pid_t { process.pid }

    /// Starts `binary` with its socket and state in `directory` (which may already hold
    /// state), plus `arguments`, and waits for `READY=1`.
    init(binary: String, directory: String, arguments: [String] = []) throws(BenchError) {
        socketPath = directory + "/d.sock"
        stateDirectory = directory + "/state"
        logPath = directory + "/daemon.log"
        let notifyPath = directory + "/notify.sock"
        try? FileSystem.remove(notifyPath)
        let notify: NotifySocket
        do {
            notify = try NotifySocket(path: notifyPath)
        } catch {
            throw BenchError("cannot bind a notify socket at \(notifyPath): \(error)")
        }
        defer { notify.close() }
        let start = Now.boot()
        do {
            process = try ChildProcess(
                binary,
                ["--socket", socketPath, "--state-dir", stateDirectory] + arguments,
                environment: ["PATH": "/usr/bin:/bin", "NOTIFY_SOCKET": notifyPath],
                errorPath: logPath
            )
        } catch {
            throw BenchError("cannot start \(binary): \(error)")
        }
        let process = self.process
        guard let ready = notify.waitForReady(timeout: .seconds(60), gaveUp: { !process.isRunning }) else {
            process.stop(SIGKILL)
            throw BenchError("stopwatchd sent no READY=1; its log (\(logPath)):\n\(Self.log(at: logPath))")
        }
        timeToReady = ready - start
    }

    deinit {
        stop()
    }

    /// Stops it with SIGTERM and waits for it to exit.
    func stop() {
        process.stop(SIGTERM)
    }

    /// What it owns and its resident size, now (nil when /proc cannot tell).
    var memory: MemoryReading? { MemoryReading(of: pid) }

    /// A connection to it, for calls.
    func connect() throws(BenchError) -> MessageConnection {
        do {
            return try MessageConnection(path: socketPath)
        } catch {
            throw BenchError("cannot connect to stopwatchd at \(socketPath): \(error)")
        }
    }

    private static func log(at path: String) -> String {
        ((try? FileSystem.contents(of: path, limit: 1 << 16)) ?? []).withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    }
}
