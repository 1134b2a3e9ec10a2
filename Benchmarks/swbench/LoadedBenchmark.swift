import LinuxSystem
import StopwatchProtocol
import Varlink

/// The `loaded` group: a daemon restoring 10,000 counting stopwatches nobody watches. Time to
/// READY against swbench reading and parsing the same files; then memory and wake-ups.
enum LoadedBenchmark {
    /// - Parameter idleMemory: the empty daemon's memory after one `Get`, when the idle group
    ///   read it; otherwise an empty daemon is started here to read it.
    static func run(_ context: BenchContext, idleMemory: MemoryReading?) throws(BenchError) -> [Figure] {
        let plan = context.plan
        let count = plan.loadedStopwatches
        let stateFiles = try context.subdirectory("loaded") + "/state/stopwatches"
        let bytes = try StateFiles.writeCounting(count, into: stateFiles)

        context.progress("time to READY with \(count) counting stopwatches restored, \(plan.loadedReadyRuns) start(s)")
        var ready = Samples(), parse = Samples()
        var daemon: DaemonUnderTest?
        for _ in 0..<plan.loadedReadyRuns {
            daemon?.stop()
            let start = Now.boot()
            let restored = try StateFiles.readAll(in: stateFiles)
            parse.append((Now.boot() - start).inMilliseconds)
            guard restored == count else { throw BenchError("\(restored) of the \(count) state files read back as counting") }
            daemon = try context.startDaemon("loaded", arguments: ["--max-stopwatches", "\(count)"])
            ready.append(daemon!.timeToReady.inMilliseconds)
        }
        guard let daemon else { throw BenchError("no daemon was started") }
        defer { daemon.stop() }
        try IdleBenchmark.serveOneGet(daemon)

        context.progress("\(count) counting: one Get served, settling \(DurationText.string(plan.settle)), then counting wake-ups for \(DurationText.string(plan.wakeupWindow))")
        let quiet = try QuietPeriod(of: daemon, settle: plan.settle, window: plan.wakeupWindow)
        let empty: MemoryReading?
        if let idleMemory { empty = idleMemory } else { empty = try emptyDaemonMemory(context) }
        let loaded = quiet.daemonMemory
        return [
            Figure(.readyLoaded, value: ready.median() ?? 0, baseline: parse.median(), details: [
                "starts": .int(Int64(ready.count)),
                "max_ms": JSONReport.number(ready.maximum ?? 0),
            ]),
            Figure(
                .memoryStopwatches, value: MemoryReading.ownedGrowth(from: empty, to: loaded), baseline: Double(bytes) / 1_048_576,
                details: JSONObject(MemoryReading.members(empty, "empty") + MemoryReading.members(loaded, "loaded"))
            ),
            Figure(.wakeupsCounting, value: quiet.daemonRate(per: .seconds(1)), baseline: quiet.sleepRate(per: .seconds(1)), details: quiet.details),
        ]
    }

    /// The memory of an empty daemon after one `Get`, settled.
    private static func emptyDaemonMemory(_ context: BenchContext) throws(BenchError) -> MemoryReading? {
        let daemon = try context.startDaemon("loaded-empty")
        defer { daemon.stop() }
        try IdleBenchmark.serveOneGet(daemon)
        CurrentProcess.sleep(for: context.plan.settle)
        return daemon.memory
    }
}
