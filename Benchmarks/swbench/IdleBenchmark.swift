import StopwatchProtocol
import Varlink

/// The `idle` group: an empty daemon (no stopwatches). Time to READY over several starts,
/// each beside a `/bin/true` start; then the last one serves one `Get` and is left alone for
/// memory and wake-ups.
enum IdleBenchmark {
    struct Outcome {
        let figures: [Figure]
        /// What the empty daemon owned after one `Get`, for the loaded group's difference.
        let idleMemory: MemoryReading?
    }

    static func run(_ context: BenchContext) throws(BenchError) -> Outcome {
        let plan = context.plan
        context.progress("time to READY, empty daemon, \(plan.readyRuns) starts")
        var ready = Samples(), bare = Samples()
        var daemon: DaemonUnderTest?
        for _ in 0..<plan.readyRuns {
            daemon?.stop()
            bare.append(try BareStart.milliseconds())
            daemon = try context.startDaemon("idle")
            ready.append(daemon!.timeToReady.inMilliseconds)
        }
        guard let daemon else { throw BenchError("no daemon was started") }
        defer { daemon.stop() }
        try serveOneGet(daemon)

        context.progress("idle daemon: one Get served, settling \(DurationText.string(plan.settle)), then counting wake-ups for \(DurationText.string(plan.wakeupWindow))")
        let quiet = try QuietPeriod(of: daemon, settle: plan.settle, window: plan.wakeupWindow)
        let figures = [
            Figure(.readyEmpty, value: ready.median() ?? 0, baseline: bare.median(), details: [
                "starts": .int(Int64(ready.count)),
                "max_ms": JSONReport.number(ready.maximum ?? 0),
            ]),
            Figure(
                .memoryIdle, value: MemoryReading.owned(quiet.daemonMemory), baseline: quiet.sleepMemory?.ownedMiB,
                details: JSONObject(MemoryReading.members(quiet.daemonMemory, "daemon") + MemoryReading.members(quiet.sleepMemory, "sleep"))
            ),
            Figure(.wakeupsIdle, value: quiet.daemonRate(per: .seconds(10)), baseline: quiet.sleepRate(per: .seconds(10)), details: quiet.details),
        ]
        return Outcome(figures: figures, idleMemory: quiet.daemonMemory)
    }

    /// SPEC §7 reads an idle daemon's memory after it has served a `Get` (a stopwatch never
    /// started reads as stopped at zero): what serving needs, allocated once, counts.
    static func serveOneGet(_ daemon: DaemonUnderTest) throws(BenchError) {
        let control = try daemon.connect()
        defer { control.close() }
        _ = try control.stopwatch(.stopwatchd("Get", name: "bench"))
    }
}

/// The baseline for process starts: `/bin/true`, spawned and waited for.
private enum BareStart {
    static func milliseconds() throws(BenchError) -> Double {
        do {
            return try ChildProcess.timedRun("/bin/true", []).time.inMilliseconds
        } catch {
            throw BenchError("cannot start /bin/true: \(error)")
        }
    }
}
