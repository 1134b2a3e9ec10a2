import Varlink

/// `swctl status` as a shell script runs it — spawn, connect, call, print, exit — against
/// the bare start of `/bin/true`, alternating one run of each.
enum SwctlMeasurement {
    static func run(swctlPath: String, socketPath: String, name: String, plan: BenchPlan) throws(BenchError) -> Figure {
        let swctl = (swctlPath, ["--socket", socketPath, "status", name])
        let bare = ("/bin/true", [String]())
        var swctlTimes = Samples(), bareTimes = Samples()
        for run in -3..<plan.processRuns {
            let swctlTime = try time(swctl)
            let bareTime = try time(bare)
            // The first three of each warm the page cache and are not counted.
            if run >= 0 {
                swctlTimes.append(swctlTime)
                bareTimes.append(bareTime)
            }
        }
        let details: JSONObject = [
            "runs_per_side": .int(Int64(swctlTimes.count)),
            "swctl_p99_ms": JSONReport.number(swctlTimes.p99() ?? 0),
            "true_p99_ms": JSONReport.number(bareTimes.p99() ?? 0),
        ]
        return Figure(.swctlStatus, value: swctlTimes.median() ?? 0, baseline: bareTimes.median(), details: details)
    }

    /// One run, in milliseconds; a failure (exit status not 0) is an error.
    private static func time(_ command: (String, [String])) throws(BenchError) -> Double {
        let run: (time: Duration, status: CInt)
        do {
            run = try ChildProcess.timedRun(command.0, command.1)
        } catch {
            throw BenchError("cannot start \(command.0): \(error)")
        }
        guard run.status == 0 else { throw BenchError("\(command.0) \(command.1.joined(separator: " ")) exited \(run.status)") }
        return run.time.inMilliseconds
    }
}
