import LinuxSystem
import Varlink

/// `swctl status` as a shell script runs it — spawn, connect, call, print, exit — against
/// the C client making the same call (the floor of such a client on this machine) and the
/// bare start of `/bin/true`, alternating one run of each.
enum SwctlMeasurement {
    static func run(
        swctlPath: String, client: CClient, socketPath: String, name: String, plan: BenchPlan, directory: String
    ) throws(BenchError) -> Figure {
        let swctl = (swctlPath, ["--socket", socketPath, "status", name])
        let c = (client.path, [socketPath, name])
        let bare = ("/bin/true", [String]())
        // Both must print the status line: a client failing fast would look fast.
        for (label, command) in [("swctl", swctl), ("the C client", c)] {
            let output = try self.output(of: command, in: directory)
            guard StatusLine.isCounting(output, name: name) else {
                throw BenchError("\(label) did not print a status line ('\(name) counting H:MM:SS'): '\(String(decoding: output, as: UTF8.self))'")
            }
        }
        var swctlTimes = Samples(), cTimes = Samples(), bareTimes = Samples()
        for run in -3..<plan.processRuns {
            let swctlTime = try time(swctl)
            let cTime = try time(c)
            let bareTime = try time(bare)
            // The first three of each warm the page cache and are not counted.
            if run >= 0 {
                swctlTimes.append(swctlTime)
                cTimes.append(cTime)
                bareTimes.append(bareTime)
            }
        }
        let trueMedian = bareTimes.median() ?? 0
        let details: JSONObject = [
            "runs_per_side": .int(Int64(swctlTimes.count)),
            "swctl_p99_ms": JSONReport.number(swctlTimes.p99() ?? 0),
            "c_client_median_ms": JSONReport.number(cTimes.median() ?? 0),
            "c_client_p99_ms": JSONReport.number(cTimes.p99() ?? 0),
            "c_client_linked": .string(client.isStatic ? "static" : "dynamic"),
            "c_client_source": .string(client.source),
            "c_client_compiler": .string(client.compiler.joined(separator: " ")),
            "true_median_ms": JSONReport.number(trueMedian),
            "true_p99_ms": JSONReport.number(bareTimes.p99() ?? 0),
        ]
        var figure = Figure(.swctlStatus, value: swctlTimes.median() ?? 0, baseline: cTimes.median(), details: details)
        figure.baselineAside = "/bin/true \(NumberText.string(trueMedian))"
        return figure
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

    /// What one run prints on its standard output.
    private static func output(of command: (String, [String]), in directory: String) throws(BenchError) -> [UInt8] {
        let path = directory + "/output"
        try? FileSystem.remove(path)
        defer { try? FileSystem.remove(path) }
        let status: CInt
        do {
            status = try ChildProcess(command.0, command.1, outputPath: path).waitForExit()
        } catch {
            throw BenchError("cannot start \(command.0): \(error)")
        }
        guard status == 0 else { throw BenchError("\(command.0) \(command.1.joined(separator: " ")) exited \(status)") }
        return (try? FileSystem.contents(of: path, limit: 4_096)) ?? []
    }
}
