import Glibc
import Varlink

/// Get round trip against the C echo's: one client, one call at a time, each timed on its
/// own. Measured pinned (swbench's thread, every thread of the daemon and the echo on one
/// CPU: the work both sides do, the judged figure) and unpinned (where the scheduler's
/// choice of core adds 25 µs each way, or not, by chance: reported beside it). The four
/// (pinned daemon, pinned echo, unpinned daemon, unpinned echo) alternate in blocks so that
/// a change in the machine's load falls on all.
enum RoundTripMeasurement {
    static func run(
        daemon: MessageConnection, daemonPID: pid_t, echo: MessageConnection, echoPID: pid_t, request: [UInt8], plan: BenchPlan
    ) throws(BenchError) -> [Figure] {
        var daemonPinned = Samples(), echoPinned = Samples(), daemonFree = Samples(), echoFree = Samples()
        _ = try times(daemon, request, count: 200)
        _ = try times(echo, request, count: 200)
        let cpu = try Pinning.firstAllowedCPU()
        let block = max(plan.roundTrips / plan.roundTripBlocks, 1)
        for _ in 0..<plan.roundTripBlocks {
            let pinning = try Pinning([daemonPID, echoPID], on: cpu)
            let pinned: Result<(Samples, Samples), BenchError>
            do throws(BenchError) {
                pinned = .success((try times(daemon, request, count: block), try times(echo, request, count: block)))
            } catch {
                pinned = .failure(error)
            }
            try pinning.release()
            let (daemonTimes, echoTimes) = try pinned.get()
            daemonPinned.append(contentsOf: daemonTimes)
            echoPinned.append(contentsOf: echoTimes)
            daemonFree.append(contentsOf: try times(daemon, request, count: block))
            echoFree.append(contentsOf: try times(echo, request, count: block))
        }
        let details: JSONObject = [
            "samples_per_side": .int(Int64(daemonPinned.count)),
            "request_bytes": .int(Int64(request.count)),
            "cpu": .int(Int64(cpu)),
            "daemon_p99_us": JSONReport.number(daemonPinned.p99() ?? 0),
            "echo_p99_us": JSONReport.number(echoPinned.p99() ?? 0),
        ]
        let unpinnedDetails: JSONObject = [
            "samples_per_side": .int(Int64(daemonFree.count)),
            "daemon_p99_us": JSONReport.number(daemonFree.p99() ?? 0),
            "echo_p99_us": JSONReport.number(echoFree.p99() ?? 0),
        ]
        return [
            Figure(.getRoundTrip, value: daemonPinned.median() ?? 0, baseline: echoPinned.median(), details: details),
            Figure(.getRoundTripUnpinned, value: daemonFree.median() ?? 0, baseline: echoFree.median(), details: unpinnedDetails),
        ]
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
