import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// The baseline for expiries and phase changes: a sender that waits on a `CLOCK_BOOTTIME`
/// timerfd armed for each instant of the daemon's run (shifted to now), as the daemon's
/// `LoopTimer` does (a timerfd has no timer slack; a sleep would wake up to 50 µs late), and
/// writes one reply of the daemon's format (`expired`, or `phase`), made beforehand, to that
/// stopwatch's socket, read by the same reader. Two senders:
/// - `process`: a C program in a process of its own (`Benchmarks/c-client/raw-fanout.c`),
///   as the daemon is. This is the floor the daemon is judged against: on this 2-core
///   machine a wake-up in another process is scheduled unlike one in a thread of the
///   reader's own, and the difference is chance, not the daemon's work (issue 30 found the
///   same of the echo server);
/// - `thread`: a thread in swbench, measured beside it. Until issue 29's fourth part it was
///   the baseline, and slept (`nanosleep`) and then made each reply.
enum RawExpiries {
    enum Sender {
        case thread
        /// The built `raw-fanout` program, and a directory for its plan and log.
        case process(CClient, directory: String)
    }

    /// `instants` and `targets` as the daemon's run had them (`DaemonExpiries.Outcome`).
    static func run(
        _ kind: ExpiringStopwatches, instants: [Duration], targets: [Duration], sender: Sender
    ) throws(BenchError) -> Samples {
        var senders: [FileDescriptor] = [], receivers: [FileDescriptor] = []
        defer { (senders + receivers).forEach { $0.close() } }
        for _ in instants {
            var pair: [CInt] = [0, 0]
            guard socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
                throw BenchError("socketpair failed: \(Errno(errno))")
            }
            senders.append(FileDescriptor(rawValue: pair[0]))
            receivers.append(FileDescriptor(rawValue: pair[1]))
        }
        let first = instants.min() ?? .zero
        // A process's start (a static C program: about a millisecond) is well inside this.
        let shift = Now.boot() + .milliseconds(300) - first
        let shifted = instants.map { $0 + shift }
        let order = instants.indices.sorted { instants[$0] < instants[$1] }
        let messages = instants.indices.map { index in
            kind.update(index, target: targets[index]).replyMessage(continues: true)
        }
        let reader = WatcherReader(receivers)
        let deadline = (shifted.max() ?? Now.boot()) + .seconds(1)
        switch sender {
        case .thread:
            let sockets = senders
            let timer: TimerDescriptor
            do {
                timer = try TimerDescriptor.make(clock: .boot)
            } catch {
                _ = reader.finish(at: Now.boot())
                throw BenchError("cannot make a boot-clock timerfd: \(error)")
            }
            defer { timer.close() }
            let thread = BenchThread { send(messages, to: sockets, at: shifted, in: order, waitingOn: timer) }
            let harvest = reader.finish(at: deadline)
            if let failure = thread.join() { throw BenchError("the raw thread stopped: \(failure)") }
            return DaemonExpiries.delays(of: harvest.deliveries, instants: shifted, event: kind.event)
        case .process(let program, let directory):
            let planPath = directory + "/\(kind.group)-plan", logPath = directory + "/\(kind.group)-raw-fanout.log"
            do {
                let file = try FileDescriptor.open(planPath, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
                defer { file.close() }
                try file.writeAll(plan(messages, to: senders, at: shifted, in: order))
            } catch {
                _ = reader.finish(at: Now.boot())
                throw BenchError("cannot write \(planPath): \(error)")
            }
            let child: ChildProcess
            do {
                child = try ChildProcess(program.path, [planPath], errorPath: logPath, inherited: senders)
            } catch {
                _ = reader.finish(at: Now.boot())
                throw BenchError("cannot start \(program.path): \(error)")
            }
            let harvest = reader.finish(at: deadline)
            let status = child.stop(SIGKILL, grace: .zero)
            guard status == 0 else {
                let log = ChildProcess.logText(at: logPath)
                throw BenchError("\(program.path) ended with status \(status): \(log)")
            }
            return DaemonExpiries.delays(of: harvest.deliveries, instants: shifted, event: kind.event)
        }
    }

    /// Nil when every reply was sent whole; else what failed.
    private static func send(
        _ messages: [[UInt8]], to sockets: [FileDescriptor], at instants: [Duration], in order: [Int], waitingOn timer: TimerDescriptor
    ) -> String? {
        for index in order {
            do {
                try timer.arm(at: instants[index])
                var entry = pollfd(fd: timer.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
                while try timer.readExpirations() == 0 {
                    if poll(&entry, 1, -1) < 0, errno != EINTR { return "poll: \(Errno(errno))" }
                }
                var sent = 0
                while sent < messages[index].count { sent += try sockets[index].send(messages[index], from: sent) }
            } catch {
                return "\(error)"
            }
        }
        return nil
    }

    /// raw-fanout.c's plan: per reply in the order sent, its instant (Int64 nanoseconds),
    /// descriptor (Int32), length (Int32), in this machine's byte order, then its bytes.
    static func plan(_ messages: [[UInt8]], to sockets: [FileDescriptor], at instants: [Duration], in order: [Int]) -> [UInt8] {
        var bytes: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value) { bytes += $0 } }
        for index in order {
            append(instants[index].nanoseconds)
            append(Int32(sockets[index].rawValue))
            append(Int32(messages[index].count))
            bytes += messages[index]
        }
        return bytes
    }
}
