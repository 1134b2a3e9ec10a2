import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// The baseline for expiries: a thread in swbench that sleeps on `CLOCK_BOOTTIME` until
/// each instant of the daemon's run (shifted to now) and writes one `expired` reply of the
/// daemon's format to that countdown's socket, read by the same reader.
enum RawExpiries {
    static func run(instants: [Duration]) throws(BenchError) -> Samples {
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
        let shift = Now.boot() + .milliseconds(200) - first
        let shifted = instants.map { $0 + shift }
        let reader = WatcherReader(receivers)
        let sockets = senders
        let sender = BenchThread { send(to: sockets, at: shifted) }
        let harvest = reader.finish(at: (shifted.max() ?? Now.boot()) + .seconds(1))
        sender.join()
        return DaemonExpiries.delays(of: harvest.deliveries, instants: shifted)
    }

    private static func send(to sockets: [FileDescriptor], at instants: [Duration]) {
        for index in instants.indices.sorted(by: { instants[$0] < instants[$1] }) {
            Now.sleep(until: instants[index])
            let stopwatch = Stopwatch(name: "countdown\(index)", state: .counting, elapsedMs: 0, targetMs: 0)
            let update = WatchUpdate(stopwatch: stopwatch, event: .expired)
            let message = VarlinkReply(parameters: update.parameters, continues: true).message
            var sent = 0
            while sent < message.count, let count = try? sockets[index].send(message, from: sent) { sent += count }
        }
    }
}
