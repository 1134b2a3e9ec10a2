import StopwatchProtocol
import Varlink

/// The `expiry` group (SPEC §7): countdowns expiring at distinct instants, each watched;
/// the delay from each instant to the receipt of its `expired` reply, against a raw
/// fan-out thread writing to as many sockets at the same instants.
enum ExpiryBenchmark {
    static func run(_ context: BenchContext) throws(BenchError) -> [Figure] {
        let plan = context.plan
        context.progress("expiry: \(plan.countdowns) watched countdowns, \(DurationText.string(plan.countdownSpacing)) apart")
        var daemon = try DaemonExpiries.run(context)
        context.progress("expiry baseline: a raw thread writing at the same instants")
        var raw = try RawExpiries.run(instants: daemon.instants)
        let details: JSONObject = [
            "countdowns": .int(Int64(plan.countdowns)),
            "received": .int(Int64(daemon.delays.count)),
            "daemon_p50_ms": JSONReport.number(daemon.delays.median() ?? .infinity),
            "daemon_max_ms": JSONReport.number(daemon.delays.maximum ?? .infinity),
            "raw_p50_ms": JSONReport.number(raw.median() ?? .infinity),
            "raw_p99_ms": JSONReport.number(raw.p99() ?? .infinity),
            "raw_max_ms": JSONReport.number(raw.maximum ?? .infinity),
        ]
        // A countdown whose expiry never came counts as infinitely late.
        let missing = plan.countdowns - daemon.delays.count
        return [Figure(
            .expiryDelay,
            value: missing > 0 ? .infinity : daemon.delays.p99() ?? .infinity,
            baseline: raw.p99(),
            details: details,
            otherConditionsMet: missing == 0
        )]
    }
}
