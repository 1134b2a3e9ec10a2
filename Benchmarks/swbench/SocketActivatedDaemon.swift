import Glibc
import LinuxSystem

/// A `stopwatchd --exit-idle` behind a real socket activator, `systemd-socket-activate`: the
/// activator binds and listens on the socket, and at the first connection execs the daemon
/// in its own process with the socket as fd 3 (`LISTEN_FDS`). Once the daemon exits on idle
/// the process is gone, socket and all: each activation is a new one of these.
final class SocketActivatedDaemon {
    static let activatorPath = "/usr/bin/systemd-socket-activate"

    /// The activator's process, which becomes the daemon's when it execs it.
    let process: ChildProcess
    let socketPath: String

    /// Starts the activator listening on `socketPath` (removed first) for `daemonPath`
    /// with its state in `stateDirectory`, and waits until it listens.
    init(daemonPath: String, socketPath: String, stateDirectory: String, idlePeriod: String, logPath: String) throws(BenchError) {
        self.socketPath = socketPath
        try? FileSystem.remove(socketPath)
        do {
            process = try ChildProcess(
                Self.activatorPath,
                ["-l", socketPath, "-E", "PATH", daemonPath, "--exit-idle", idlePeriod, "--state-dir", stateDirectory],
                errorPath: logPath
            )
        } catch {
            throw BenchError("cannot start \(Self.activatorPath): \(error)")
        }
        let deadline = Now.boot() + .seconds(10)
        while !Self.isListening(socketPath) {
            guard process.isRunning else { throw BenchError("\(Self.activatorPath) exited before it listened on \(socketPath)") }
            guard Now.boot() < deadline else {
                process.stop(SIGKILL)
                throw BenchError("\(Self.activatorPath) did not listen on \(socketPath) within 10 s")
            }
            CurrentProcess.sleep(for: .milliseconds(2))
        }
    }

    deinit {
        process.stop(SIGKILL, grace: .zero)
    }

    var pid: pid_t { process.pid }

    /// Whether a socket listens at `path`: a line of /proc/net/unix with the flag
    /// `__SO_ACCEPTCON` (00010000) ends with it. (The file exists from `bind`, before
    /// `listen`; a connection in between would be refused.)
    static func isListening(_ path: String) -> Bool {
        guard let bytes = try? FileSystem.contents(of: "/proc/net/unix", limit: 1 << 24) else { return false }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").contains { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count >= 8 && fields[3] == "00010000" && fields[7] == path
        }
    }

    /// Whether it exists and is its name (`comm`) `name`: the activator has exec'd it.
    func isRunning(as name: String) -> Bool {
        guard process.isRunning, let bytes = try? FileSystem.contents(of: "/proc/\(pid)/comm", limit: 256) else { return false }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init) == name
    }
}
