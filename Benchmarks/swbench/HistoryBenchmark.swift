import LinuxSystem
import StopwatchProtocol
import Varlink

/// The `history` group (SPEC §7): `swctl report` over a long history, end to end, against
/// swbench reading and parsing the same files itself, with the daemon's resident memory
/// sampled while it streams them; and `swctl log --since today` with that history against
/// the same with a short one (the same intervals today in both).
enum HistoryBenchmark {
    static func run(_ context: BenchContext) throws(BenchError) -> [Figure] {
        let plan = context.plan
        let now = Posix.clockTime(.realtime).milliseconds
        let large = try prepare(context, "history-large", intervals: plan.historyIntervals, now: now)
        let small = try prepare(context, "history-small", intervals: plan.historyShortIntervals, now: now)

        context.progress("history: \(large.written.intervals) intervals (\(large.written.bytes) bytes in \(large.written.files) files), \(plan.historyRuns) report(s)")
        let daemon = try context.startDaemon("history-large")
        defer { daemon.stop() }
        let report = [context.options.swctlPath, "--socket", daemon.socketPath, "report"]
        guard let residentBefore = ProcFS.residentKiB(of: daemon.pid) else { throw BenchError("cannot read the daemon's VmRSS") }
        var reportTimes = Samples(), parseTimes = Samples()
        var peakKiB = residentBefore, residentSamples = 0
        // The first of each warms the page cache and is not counted; the daemon's memory is.
        for run in -1..<plan.historyRuns {
            let sampler = ResidentSampler(pid: daemon.pid, every: .milliseconds(2))
            let reportTime = try time(report)
            let sampled = sampler.finish()
            peakKiB = max(peakKiB, sampled.peakKiB)
            residentSamples += sampled.samples
            let start = Now.boot()
            let parsed = try HistoryFiles.parseAll(in: large.historyDirectory)
            let parseTime = (Now.boot() - start).inMilliseconds
            guard parsed.intervals == large.written.intervals else {
                throw BenchError("\(parsed.intervals) of the \(large.written.intervals) intervals written parse back")
            }
            if run >= 0 {
                reportTimes.append(reportTime)
                parseTimes.append(parseTime)
            }
        }

        context.progress("history: swctl log --since today, \(large.written.intervals) against \(small.written.intervals) intervals, \(plan.historyLogRuns) run(s) each")
        let smallDaemon = try context.startDaemon("history-small")
        defer { smallDaemon.stop() }
        let logLarge = [context.options.swctlPath, "--socket", daemon.socketPath, "log", "--since", "today"]
        let logSmall = [context.options.swctlPath, "--socket", smallDaemon.socketPath, "log", "--since", "today"]
        var largeTimes = Samples(), smallTimes = Samples()
        for run in -1..<plan.historyLogRuns {
            let largeTime = try time(logLarge)
            let smallTime = try time(logSmall)
            if run >= 0 {
                largeTimes.append(largeTime)
                smallTimes.append(smallTime)
            }
        }

        return [
            Figure(.historyReport, value: reportTimes.median() ?? 0, baseline: parseTimes.median(), details: [
                "intervals": .int(Int64(large.written.intervals)),
                "bytes": .int(Int64(large.written.bytes)),
                "files": .int(Int64(large.written.files)),
                "runs": .int(Int64(reportTimes.count)),
                "report_max_ms": JSONReport.number(reportTimes.maximum ?? 0),
                "parse_max_ms": JSONReport.number(parseTimes.maximum ?? 0),
            ]),
            Figure(.memoryHistory, value: Double(peakKiB - residentBefore) / 1024, details: [
                "before_mib": JSONReport.number(Double(residentBefore) / 1024),
                "peak_mib": JSONReport.number(Double(peakKiB) / 1024),
                "samples": .int(Int64(residentSamples)),
                "reports": .int(Int64(reportTimes.count + 1)),
            ]),
            Figure(.historyLogToday, value: largeTimes.median() ?? 0, baseline: smallTimes.median(), details: [
                "intervals": .int(Int64(large.written.intervals)),
                "baseline_intervals": .int(Int64(small.written.intervals)),
                "today": .int(Int64(large.written.today)),
                "runs_per_side": .int(Int64(largeTimes.count)),
                "max_ms": JSONReport.number(largeTimes.maximum ?? 0),
                "baseline_max_ms": JSONReport.number(smallTimes.maximum ?? 0),
            ]),
        ]
    }

    /// Writes a history of `intervals` into the state directory of daemon `name`.
    private static func prepare(_ context: BenchContext, _ name: String, intervals: Int, now: Int64) throws(BenchError) -> (written: HistoryFiles.Written, historyDirectory: String) {
        let historyDirectory = try context.subdirectory(name) + "/state/history"
        let start = Now.boot()
        let written = try HistoryFiles.write(intervals, today: context.plan.historyToday, now: now, into: historyDirectory)
        context.progress("history: wrote \(written.intervals) intervals in \(Int((Now.boot() - start).inMilliseconds)) ms")
        return (written, historyDirectory)
    }

    /// One run of `command`, output to /dev/null, in milliseconds; exit status not 0 is an error.
    private static func time(_ command: [String]) throws(BenchError) -> Double {
        let run: (time: Duration, status: CInt)
        do {
            run = try ChildProcess.timedRun(command[0], Array(command.dropFirst()))
        } catch {
            throw BenchError("cannot start \(command[0]): \(error)")
        }
        guard run.status == 0 else { throw BenchError("\(command.joined(separator: " ")) exited \(run.status)") }
        return run.time.inMilliseconds
    }
}
