import LinuxSystem
import StopWatchCore
import Varlink

/// Countdowns of a real daemon, each watched by a connection of its own, expiring one
/// after another: countdown `i` is set to end `lead + i·spacing` after its Countdown call.
/// Each one's instant is read from its state file (its origin on the boot clock, to the
/// nanosecond, plus its target), so the delay is the daemon's alone.
enum DaemonExpiries {
    struct Outcome {
        /// When each countdown expired, on the boot clock, by watcher.
        let instants: [Duration]
        /// Instant to receipt of the `expired` reply, in milliseconds, one per countdown received.
        var delays: Samples
    }

    static func run(_ context: BenchContext) throws(BenchError) -> Outcome {
        let plan = context.plan
        let daemon = try context.startDaemon("expiry")
        defer { daemon.stop() }
        var watchers: [MessageConnection] = []
        defer { watchers.forEach { $0.close() } }
        for index in 0..<plan.countdowns {
            let connection = try daemon.connect()
            watchers.append(connection)
            do {
                try connection.send(VarlinkCall.stopwatchd("Watch", name: name(index), more: true).message)
                _ = try connection.receive()
            } catch {
                throw BenchError("watcher \(index) failed: \(error)")
            }
        }
        let reader = WatcherReader(watchers.map(\.descriptor))
        let control = try daemon.connect()
        defer { control.close() }
        for index in 0..<plan.countdowns {
            let target = plan.countdownLead + plan.countdownSpacing * index
            var call = VarlinkCall.stopwatchd("Countdown", name: name(index))
            call.parameters["target_ms"] = .int(target.milliseconds)
            _ = try control.stopwatch(call)
        }
        var instants: [Duration] = []
        for index in 0..<plan.countdowns {
            guard let origin = StateFiles.origin(of: name(index), in: daemon.stateDirectory + "/stopwatches") else {
                throw BenchError("no origin in the state file of \(name(index))")
            }
            instants.append(origin + plan.countdownLead + plan.countdownSpacing * index)
        }
        let harvest = reader.finish(at: (instants.max() ?? Now.boot()) + .seconds(1))
        return Outcome(instants: instants, delays: delays(of: harvest.deliveries, instants: instants))
    }

    /// Each watcher's first `expired` reply, as a delay after its instant.
    static func delays(of deliveries: [Delivery], instants: [Duration]) -> Samples {
        var seen = Set<Int>()
        var delays = Samples()
        for delivery in deliveries where !seen.contains(delivery.watcher) && isExpiry(delivery.message) {
            seen.insert(delivery.watcher)
            delays.append((delivery.received - instants[delivery.watcher]).inMilliseconds)
        }
        return delays
    }

    private static let expiredMarker = Array(#""event":"expired""#.utf8)

    private static func isExpiry(_ message: [UInt8]) -> Bool {
        guard message.count >= expiredMarker.count else { return false }
        return (0...(message.count - expiredMarker.count)).contains { start in
            message[start..<(start + expiredMarker.count)].elementsEqual(expiredMarker)
        }
    }

    private static func name(_ index: Int) -> String { "countdown\(index)" }
}
