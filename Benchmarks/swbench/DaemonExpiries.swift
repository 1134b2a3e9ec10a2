import LinuxSystem
import StopWatchCore
import StopwatchProtocol
import Varlink

/// Countdowns (or automatic cycles) of a real daemon, each watched by a connection of its
/// own, expiring one after another: stopwatch `i` is set to end its countdown (or first
/// phase) `lead + i·spacing` after its call. Each one's instant is read from its state file
/// (its origin on the boot clock, to the nanosecond, plus that target), so the delay is the
/// daemon's alone.
enum DaemonExpiries {
    struct Outcome {
        /// When each one's countdown or first phase ended, on the boot clock, by watcher.
        let instants: [Duration]
        /// Each one's countdown or first phase, by watcher: the raw baseline's replies carry it.
        let targets: [Duration]
        /// Instant to receipt of the timed reply, in milliseconds, one per stopwatch received.
        var delays: Samples
        /// The daemon's `--state-dir`, which holds its history.
        let stateDirectory: String
    }

    static func run(_ context: BenchContext, _ kind: ExpiringStopwatches) throws(BenchError) -> Outcome {
        let plan = context.plan
        let count = kind.count(in: plan)
        let targets = (0..<count).map { kind.lead(in: plan) + kind.spacing(in: plan) * $0 }
        let daemon = try context.startDaemon(kind.group)
        defer { daemon.stop() }
        var watchers: [MessageConnection] = []
        defer { watchers.forEach { $0.close() } }
        for index in 0..<count {
            let connection = try daemon.connect()
            watchers.append(connection)
            do {
                try connection.send(VarlinkCall.stopwatchd("Watch", name: kind.name(index), more: true).message)
                _ = try connection.receive()
            } catch {
                throw BenchError("watcher \(index) failed: \(error)")
            }
        }
        let reader = WatcherReader(watchers.map(\.descriptor))
        let control = try daemon.connect()
        defer { control.close() }
        if case .cycles = kind {
            // This month's history file made first, as on any day but that of a month's first
            // interval: making it (the folder's flush, the own-folder record) is a cost of the
            // month, not of a phase change, and the first phase would otherwise pay it for all.
            _ = try control.stopwatch(VarlinkCall.stopwatchd("Start", name: "month"))
            _ = try control.stopwatch(VarlinkCall.stopwatchd("Stop", name: "month"))
        }
        for index in 0..<count {
            _ = try control.stopwatch(kind.call(index, target: targets[index]))
        }
        var instants: [Duration] = []
        for index in 0..<count {
            guard let origin = StateFiles.origin(of: kind.name(index), in: daemon.stateDirectory + "/stopwatches") else {
                throw BenchError("no origin in the state file of \(kind.name(index))")
            }
            instants.append(origin + targets[index])
        }
        let harvest = reader.finish(at: (instants.max() ?? Now.boot()) + .seconds(1))
        return Outcome(
            instants: instants, targets: targets, delays: delays(of: harvest.deliveries, instants: instants, event: kind.event),
            stateDirectory: daemon.stateDirectory
        )
    }

    /// Each watcher's first reply of `event`, as a delay after its instant.
    static func delays(of deliveries: [Delivery], instants: [Duration], event: WatchEvent) -> Samples {
        let marker = Array(#""event":"\#(event.rawValue)""#.utf8)
        var seen = Set<Int>()
        var delays = Samples()
        for delivery in deliveries where !seen.contains(delivery.watcher) && contains(delivery.message, marker) {
            seen.insert(delivery.watcher)
            delays.append((delivery.received - instants[delivery.watcher]).inMilliseconds)
        }
        return delays
    }

    private static func contains(_ message: [UInt8], _ marker: [UInt8]) -> Bool {
        guard message.count >= marker.count else { return false }
        return (0...(message.count - marker.count)).contains { start in
            message[start..<(start + marker.count)].elementsEqual(marker)
        }
    }
}
