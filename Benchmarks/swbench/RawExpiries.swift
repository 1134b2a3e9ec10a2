import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// The baseline for expiries and phase changes: a thread in swbench that sleeps on
/// `CLOCK_BOOTTIME` until each instant of the daemon's run (shifted to now) and writes one
/// reply of the daemon's format (`expired`, or `phase`) to that stopwatch's socket, read by
/// the same reader.
enum RawExpiries {
    /// `instants` and `targets` as the daemon's run had them (`DaemonExpiries.Outcome`).
    static func run(_ kind: ExpiringStopwatches, instants: [Duration], targets: [Duration]) throws(BenchError) -> Samples {
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
        let sender = BenchThread { send(kind, to: sockets, at: shifted, targets: targets) }
        let harvest = reader.finish(at: (shifted.max() ?? Now.boot()) + .seconds(1))
        sender.join()
        return DaemonExpiries.delays(of: harvest.deliveries, instants: shifted, event: kind.event)
    }

    private static func send(_ kind: ExpiringStopwatches, to sockets: [FileDescriptor], at instants: [Duration], targets: [Duration]) {
        for index in instants.indices.sorted(by: { instants[$0] < instants[$1] }) {
            Now.sleep(until: instants[index])
            let update = kind.update(index, target: targets[index])
            let message = VarlinkReply(parameters: update.parameters, continues: true).message
            var sent = 0
            while sent < message.count, let count = try? sockets[index].send(message, from: sent) { sent += count }
        }
    }
}
