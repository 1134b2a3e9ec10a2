import Varlink

/// Get round trip against the echo round trip: one client, one call at a time, each timed
/// on its own; the two sides alternate in blocks so that a change in the machine's load
/// falls on both.
enum RoundTripMeasurement {
    static func run(daemon: MessageConnection, echo: MessageConnection, request: [UInt8], plan: BenchPlan) throws(BenchError) -> Figure {
        var daemonTimes = Samples(), echoTimes = Samples()
        _ = try times(daemon, request, count: 200)
        _ = try times(echo, request, count: 200)
        let block = max(plan.roundTrips / plan.roundTripBlocks, 1)
        for _ in 0..<plan.roundTripBlocks {
            daemonTimes.append(contentsOf: try times(daemon, request, count: block))
            echoTimes.append(contentsOf: try times(echo, request, count: block))
        }
        let details: JSONObject = [
            "samples_per_side": .int(Int64(daemonTimes.count)),
            "request_bytes": .int(Int64(request.count)),
            "daemon_p99_us": JSONReport.number(daemonTimes.p99() ?? 0),
            "echo_p99_us": JSONReport.number(echoTimes.p99() ?? 0),
        ]
        return Figure(.getRoundTrip, value: daemonTimes.median() ?? 0, baseline: echoTimes.median(), details: details)
    }

    /// `count` round trips of `request` over `connection`, in microseconds.
    private static func times(_ connection: MessageConnection, _ request: [UInt8], count: Int) throws(BenchError) -> Samples {
        var samples = Samples()
        do {
            for _ in 0..<count {
                let start = Now.boot()
                try connection.send(request)
                _ = try connection.receive()
                samples.append((Now.boot() - start).inMicroseconds)
            }
        } catch {
            throw BenchError("a round trip failed: \(error)")
        }
        return samples
    }
}
