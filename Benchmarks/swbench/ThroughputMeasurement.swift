import LinuxSystem
import Varlink

/// Get throughput of 8 clients, each on its own connection and thread making one call at a
/// time, against the same 8 clients on the echo server; rounds alternate between the two.
enum ThroughputMeasurement {
    static func run(daemonPath: String, echoPath: String, request: [UInt8], plan: BenchPlan) throws(BenchError) -> Figure {
        var daemonCalls = 0, echoCalls = 0
        for _ in 0..<plan.throughputRounds {
            daemonCalls += try round(path: daemonPath, request: request, plan: plan)
            echoCalls += try round(path: echoPath, request: request, plan: plan)
        }
        let seconds = plan.throughputRound.inSeconds * Double(plan.throughputRounds)
        let details: JSONObject = [
            "clients": .int(Int64(plan.throughputClients)),
            "seconds_per_side": JSONReport.number(seconds),
            "daemon_calls": .int(Int64(daemonCalls)),
            "echo_calls": .int(Int64(echoCalls)),
        ]
        return Figure(.throughput, value: Double(daemonCalls) / seconds, baseline: Double(echoCalls) / seconds, details: details)
    }

    /// Calls completed by all clients together in one round of `plan.throughputRound`.
    private static func round(path: String, request: [UInt8], plan: BenchPlan) throws(BenchError) -> Int {
        // Connected and warmed up first; then all count over the same window.
        let start = Now.boot() + .milliseconds(100)
        let end = start + plan.throughputRound
        let clients = (0..<plan.throughputClients).map { _ in
            BenchThread { () -> Result<Int, Errno> in
                do throws(Errno) {
                    let connection = try MessageConnection(path: path)
                    defer { connection.close() }
                    for _ in 0..<10 {
                        try connection.send(request)
                        _ = try connection.receive()
                    }
                    Now.sleep(until: start)
                    var calls = 0
                    while true {
                        try connection.send(request)
                        _ = try connection.receive()
                        guard Now.boot() <= end else { return .success(calls) }
                        calls += 1
                    }
                } catch {
                    return .failure(error)
                }
            }
        }
        var total = 0
        for client in clients {
            switch client.join() {
            case .success(let calls): total += calls
            case .failure(let error): throw BenchError("a throughput client failed on \(path): \(error)")
            }
        }
        return total
    }
}
