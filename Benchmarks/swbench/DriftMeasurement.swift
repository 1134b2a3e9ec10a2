import StopwatchProtocol

/// Drift: a stopwatch started at the beginning of the run counts while everything else is
/// measured; after the drift period its elapsed time is compared with `CLOCK_BOOTTIME`.
///
/// The start instant is the daemon's own, from the stopwatch's state file (as for the
/// fan-out); failing that, it lies between sending Start and its reply. The Get is bracketed
/// by boot-clock readings too, so the true elapsed time lies between (Get sent − latest
/// start) and (Get replied − earliest start). The daemon reports whole milliseconds (rounded
/// down): the drift is how far its figure falls outside that range.
final class DriftMeasurement {
    private let daemon: DaemonUnderTest
    private let earliestStart: Duration
    private let latestStart: Duration
    private let startSource: String
    private let period: Duration
    private let name = "drift"

    init(_ context: BenchContext) throws(BenchError) {
        period = context.plan.driftPeriod
        daemon = try context.startDaemon("drift")
        // A connection for each call: the daemon closes one left without a call for its
        // --idle-timeout (60 s), and the period is longer.
        let control = try daemon.connect()
        defer { control.close() }
        let sent = Now.boot()
        let started = try control.stopwatch(.stopwatchd("Start", name: name))
        let replied = Now.boot()
        guard started.state == .counting else { throw BenchError("Start replied \(started)") }
        if let recorded = StateFiles.origin(of: name, in: daemon.stateDirectory + "/stopwatches"), (sent...replied).contains(recorded) {
            (earliestStart, latestStart, startSource) = (recorded, recorded, "state file")
        } else {
            (earliestStart, latestStart, startSource) = (sent, replied, "Start sent and replied")
        }
        context.progress("drift: a stopwatch counts for \(DurationText.string(period)) while the rest runs")
    }

    deinit {
        daemon.stop()
    }

    /// Waits for the end of the period (if it has not passed) and measures.
    func finish(_ context: BenchContext) throws(BenchError) -> Figure {
        if Now.boot() < earliestStart + period {
            context.progress("drift: waiting for the end of the \(DurationText.string(period)) period")
            Now.sleep(until: earliestStart + period)
        }
        let control = try daemon.connect()
        defer { control.close() }
        let getSent = Now.boot()
        let stopwatch = try control.stopwatch(.stopwatchd("Get", name: name))
        let getReplied = Now.boot()
        let lowest = (getSent - latestStart).milliseconds, highest = (getReplied - earliestStart).milliseconds
        let drift = stopwatch.elapsedMs < lowest ? stopwatch.elapsedMs - lowest : stopwatch.elapsedMs > highest ? stopwatch.elapsedMs - highest : 0
        return Figure(.drift, value: Double(drift), details: [
            "period_s": JSONReport.number((getSent - earliestStart).inSeconds),
            "start_instant_from": .string(startSource),
            "elapsed_ms": .int(stopwatch.elapsedMs),
            "boot_clock_lowest_ms": .int(lowest),
            "boot_clock_highest_ms": .int(highest),
        ])
    }
}
