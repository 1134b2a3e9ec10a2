import StopwatchProtocol
import Varlink

/// The `fanout` group: the daemon's 1,000 watchers, then the raw fan-out baseline with the
/// same watcher count, ticks and reader.
enum FanOutBenchmark {
    static func run(_ context: BenchContext) throws(BenchError) -> [Figure] {
        let plan = context.plan
        context.progress("fan-out: \(plan.watchers) watchers of one stopwatch, \(plan.fanOutTicks) ticks of \(DurationText.string(plan.tick))")
        var daemon = try DaemonFanOut.run(context)
        context.progress("fan-out baseline: a raw fan-out thread, \(plan.fanOutTicks) ticks")
        var raw = try RawFanOut.run(watchers: plan.watchers, ticks: plan.fanOutTicks, tick: plan.tick)

        let details: JSONObject = [
            "watchers": .int(Int64(plan.watchers)),
            "ticks": .int(Int64(plan.fanOutTicks)),
            "daemon": .object(daemon.fanOut.statistics.details()),
            "raw": .object(raw.statistics.details()),
            "daemon_closed_watchers": .int(Int64(daemon.fanOut.closed)),
            "start_round_trip_ms": JSONReport.number(daemon.startRoundTrip.inMilliseconds),
            "start_instant_from": .string(daemon.originSource),
        ]
        let delivered = Figure(.fanOutDelivery, value: daemon.fanOut.statistics.deliveredPercent, baseline: raw.statistics.deliveredPercent, details: details)
        let delay = Figure(
            .fanOutDelay,
            value: daemon.fanOut.statistics.delays.p99() ?? .infinity,
            baseline: raw.statistics.delays.p99()
        )
        let cpu = Figure(.fanOutCPU, value: daemon.fanOut.cpuPercent, baseline: raw.cpuPercent)
        // "Within 2 ms after its boundary", in microseconds: each tick's first receipt (an
        // upper bound on when it left; its elapsed_ms is whole milliseconds), the p99 over
        // the ticks. No tick may be early, by its receipt or by its elapsed time.
        var firstReceipts = daemon.fanOut.statistics.firstReceiptDelays
        var rawFirstReceipts = raw.statistics.firstReceiptDelays
        let earliestReceipt = firstReceipts.minimum ?? 0
        let earliestElapsed = daemon.fanOut.statistics.accuracy.minimum ?? 0
        let accuracy = Figure(
            .tickAccuracy,
            value: firstReceipts.p99() ?? .infinity,
            baseline: rawFirstReceipts.p99(),
            details: [
                "first_receipt_min_us": JSONReport.number(earliestReceipt),
                "first_receipt_p50_us": JSONReport.number(firstReceipts.median() ?? 0),
                "ticks_received": .int(Int64(firstReceipts.count)),
                "elapsed_minus_boundary_min_ms": JSONReport.number(earliestElapsed),
                "elapsed_minus_boundary_p99_ms": JSONReport.number(daemon.fanOut.statistics.accuracy.p99() ?? 0),
            ],
            otherConditionsMet: earliestReceipt >= 0 && earliestElapsed >= 0
        )
        let memory = Figure(
            .memoryWatchers,
            value: MemoryReading.ownedGrowth(from: daemon.memoryBefore, to: daemon.memoryWithWatchers),
            details: JSONObject(MemoryReading.members(daemon.memoryBefore, "before") + MemoryReading.members(daemon.memoryWithWatchers, "with_watchers"))
        )
        return [delivered, delay, cpu, accuracy, memory]
    }
}
