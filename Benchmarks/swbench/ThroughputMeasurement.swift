import Glibc
import LinuxSystem
import Varlink

/// Get throughput of 8 clients, each on its own connection and thread making one call at a
/// time, against the same 8 clients on the C echo; rounds alternate between the two. Each
/// server's CPU time (its CPU-time clock, all its threads) over its rounds, per call counted:
/// what a Get costs the daemon beside what answering costs at the least. The window holds
/// each client's last call, not counted, and the 8 disconnections, on both sides alike.
enum ThroughputMeasurement {
    struct Server {
        let path: String
        let pid: pid_t
    }

    static func run(daemon: Server, echo: Server, request: [UInt8], plan: BenchPlan) throws(BenchError) -> [Figure] {
        var daemonCalls = 0, echoCalls = 0
        var daemonCPU = 0.0, echoCPU = 0.0
        for _ in 0..<plan.throughputRounds {
            let daemonRound = try round(daemon, request: request, plan: plan)
            daemonCalls += daemonRound.calls
            daemonCPU += daemonRound.cpuSeconds
            let echoRound = try round(echo, request: request, plan: plan)
            echoCalls += echoRound.calls
            echoCPU += echoRound.cpuSeconds
        }
        let seconds = plan.throughputRound.inSeconds * Double(plan.throughputRounds)
        let details: JSONObject = [
            "clients": .int(Int64(plan.throughputClients)),
            "seconds_per_side": JSONReport.number(seconds),
            "daemon_calls": .int(Int64(daemonCalls)),
            "echo_calls": .int(Int64(echoCalls)),
        ]
        let cpuDetails: JSONObject = [
            "daemon_cpu_seconds": JSONReport.number(daemonCPU),
            "echo_cpu_seconds": JSONReport.number(echoCPU),
        ]
        return [
            Figure(.throughput, value: Double(daemonCalls) / seconds, baseline: Double(echoCalls) / seconds, details: details),
            Figure(
                .getCPU, value: daemonCPU / Double(max(daemonCalls, 1)) * 1e6, baseline: echoCPU / Double(max(echoCalls, 1)) * 1e6,
                details: cpuDetails
            ),
        ]
    }

    /// Calls completed by all clients together in one round of `plan.throughputRound`, and
    /// the server's CPU time from just before the window to just after the last client.
    private static func round(_ server: Server, request: [UInt8], plan: BenchPlan) throws(BenchError) -> (calls: Int, cpuSeconds: Double) {
        // Connected and warmed up first; then all count over the same window.
        let start = Now.boot() + .milliseconds(100)
        let end = start + plan.throughputRound
        let path = server.path
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
        Now.sleep(until: start)
        let cpuBefore = ProcFS.preciseCPUSeconds(of: server.pid)
        var total = 0
        for client in clients {
            switch client.join() {
            case .success(let calls): total += calls
            case .failure(let error): throw BenchError("a throughput client failed on \(path): \(error)")
            }
        }
        guard let cpuBefore, let cpuAfter = ProcFS.preciseCPUSeconds(of: server.pid) else {
            throw BenchError("cannot read the CPU-time clock of process \(server.pid)")
        }
        return (total, cpuAfter - cpuBefore)
    }
}
