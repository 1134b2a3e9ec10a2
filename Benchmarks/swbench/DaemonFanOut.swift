import LinuxSystem
import Varlink

/// The fan-out of a real daemon: 1,000 watchers of one stopwatch, started once all of them
/// watch.
///
/// The boundaries are counted from the daemon's own start instant, which its state file
/// holds to the nanosecond (`origin_boot_ns`, on the same boot clock) once Start has
/// replied. Should that file not tell, the instant the Start call was sent is used instead:
/// the daemon started counting between that and its reply, so delays would be overstated by
/// at most that round trip, never understated.
enum DaemonFanOut {
    struct Outcome {
        var fanOut: FanOutResult
        let memoryBefore: MemoryReading?
        let memoryWithWatchers: MemoryReading?
        let startRoundTrip: Duration
        /// Where the start instant came from: "state file" or "Start sent".
        let originSource: String
    }

    static func run(_ context: BenchContext) throws(BenchError) -> Outcome {
        let plan = context.plan
        let daemon = try context.startDaemon("fanout")
        defer { daemon.stop() }
        let name = "fan"
        let control = try daemon.connect()
        defer { control.close() }
        _ = try control.stopwatch(.stopwatchd("Get", name: name))
        CurrentProcess.sleep(for: .milliseconds(200))
        let memoryBefore = daemon.memory

        var watchers: [MessageConnection] = []
        defer { watchers.forEach { $0.close() } }
        for index in 0..<plan.watchers {
            watchers.append(try watch(name, on: daemon, index: index))
        }
        let reader = WatcherReader(watchers.map(\.descriptor))

        let sent = Now.boot()
        _ = try control.stopwatch(.stopwatchd("Start", name: name))
        let replied = Now.boot()
        let cpuAtStart = ProcFS.cpuSeconds(of: daemon.pid) ?? 0
        let harvest = reader.finish(at: sent + plan.tick * plan.fanOutTicks + plan.tick / 2)
        let cpuSeconds = (ProcFS.cpuSeconds(of: daemon.pid) ?? 0) - cpuAtStart
        let wall = Now.boot() - replied
        let memoryWithWatchers = daemon.memory

        let recordedStart = StateFiles.origin(of: name, in: daemon.stateDirectory + "/stopwatches").flatMap { (sent...replied).contains($0) ? $0 : nil }
        let statistics = TickStatistics(harvest.deliveries, watchers: plan.watchers, ticks: plan.fanOutTicks, tick: plan.tick, origin: recordedStart ?? sent)
        return Outcome(
            fanOut: FanOutResult(statistics: statistics, cpuPercent: cpuSeconds / wall.inSeconds * 100, closed: harvest.closed),
            memoryBefore: memoryBefore,
            memoryWithWatchers: memoryWithWatchers,
            startRoundTrip: replied - sent,
            originSource: recordedStart == nil ? "Start sent" : "state file"
        )
    }

    /// A connection watching `name`, its first reply (the current state) read.
    private static func watch(_ name: String, on daemon: DaemonUnderTest, index: Int) throws(BenchError) -> MessageConnection {
        let connection = try daemon.connect()
        do {
            try connection.send(VarlinkCall.stopwatchd("Watch", name: name, more: true).message)
            let first = try connection.receive()
            guard !connection.hasPendingBytes, (try? VarlinkReply(json: JSONParser.parse(first)))?.error == nil else {
                throw BenchError("watcher \(index) got \(String(decoding: first, as: UTF8.self))")
            }
        } catch let error as BenchError {
            connection.close()
            throw error
        } catch {
            connection.close()
            throw BenchError("watcher \(index) failed: \(error)")
        }
        return connection
    }
}
