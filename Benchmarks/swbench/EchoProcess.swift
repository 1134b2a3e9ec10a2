import Glibc
import LinuxSystem

/// The baseline of calls: the C echo server (`Benchmarks/c-client/echo.c`, one thread and
/// one epoll, as the daemon's serving loop) in a process of its own, as the daemon is. swbench
/// makes the listening socket and hands it over, so clients may connect at once.
final class EchoProcess {
    let path: String
    private let child: ChildProcess
    private let log: String
    var pid: pid_t { child.pid }

    /// Serves at `path`, each reply `replySize` bytes (its NUL included); its output goes to
    /// `log`.
    init(program: CClient, path: String, replySize: Int, log: String) throws(BenchError) {
        self.path = path
        self.log = log
        let listener: FileDescriptor
        do {
            listener = try FileDescriptor.unixStreamSocket(nonBlocking: true)
        } catch {
            throw BenchError("cannot make the echo server's socket: \(error)")
        }
        defer { listener.close() }
        do throws(Errno) {
            try listener.bind(toPath: path)
            try listener.listen(backlog: 64)
            child = try ChildProcess(
                program.path, ["\(listener.rawValue)", "\(replySize)"], outputPath: log, errorPath: log, inherited: [listener]
            )
        } catch {
            throw BenchError("cannot start the C echo server at \(path): \(error)")
        }
    }

    /// Throws, with what it printed, if it has ended: it serves until stopped.
    func checkServing() throws(BenchError) {
        guard !child.isRunning else { return }
        let status = child.waitForExit()
        let message = ChildProcess.logText(at: log)
        throw BenchError("the C echo server ended (status \(status)): \(message)")
    }

    func stop() {
        child.stop(SIGTERM, grace: .seconds(2))
        try? FileSystem.remove(path)
    }
}
