import LinuxSystem
import StopwatchProtocol
import Varlink

/// The `history` group (SPEC §7): `swctl report` over a long history, end to end, against
/// swbench reading and parsing the same files itself, with the daemon's resident memory
/// sampled while it streams them; `swctl log --since today` with that history against
/// the same with a short one (the same intervals today in both); the memory the daemon
/// owns while 256 History readers read nothing (issue 24), each stream then read whole; and
/// `swctl report` over the same number of intervals and corrections dealt out among three
/// devices (this one and two peers' folders, SPEC §4 "History across devices"), against
/// parsing those files.
enum HistoryBenchmark {
    static func run(_ context: BenchContext) throws(BenchError) -> [Figure] {
        let plan = context.plan
        let now = Posix.clockTime(.realtime).milliseconds
        let large = try prepare(context, "history-large", intervals: plan.historyIntervals, corrections: plan.historyCorrections, now: now)
        let small = try prepare(context, "history-small", intervals: plan.historyShortIntervals, corrections: 0, now: now)

        context.progress("history: \(large.written.intervals) intervals and \(large.written.corrections) corrections (\(large.written.bytes) bytes in \(large.written.files) files), \(plan.historyRuns) report(s)")
        let daemon = try context.startDaemon("history-large")
        defer { daemon.stop() }
        let report = [context.options.swctlPath, "--socket", daemon.socketPath, "report"]
        guard let ownedBefore = ProcFS.ownedKiB(of: daemon.pid), let residentBefore = ProcFS.residentKiB(of: daemon.pid) else {
            throw BenchError("cannot read the daemon's smaps_rollup or VmRSS")
        }
        var reportTimes = Samples(), parseTimes = Samples()
        var peak = ResidentSampler.Peaks(ownedKiB: ownedBefore, residentKiB: residentBefore)
        var sampledReports = 0
        /// One report with the daemon's memory sampled every 2 ms (not timed: reading
        /// smaps_rollup walks the daemon's mappings under its lock, which would slow the report).
        func sampledReport() throws(BenchError) {
            let sampler = ResidentSampler(pid: daemon.pid, every: .milliseconds(2))
            _ = try time(report)
            let sampled = sampler.finish()
            peak.ownedKiB = max(peak.ownedKiB, sampled.ownedKiB)
            peak.residentKiB = max(peak.residentKiB, sampled.residentKiB)
            peak.samples += sampled.samples
            sampledReports += 1
        }
        // The first warms the page cache and builds the correction index: not timed, its
        // memory sampled; so is one more after the timed ones.
        try sampledReport()
        for _ in 0..<plan.historyRuns {
            let reportTime = try time(report)
            let start = Now.boot()
            let parsed = try HistoryFiles.parseAll(in: large.written.monthsDirectory)
            let parseTime = (Now.boot() - start).inMilliseconds
            guard parsed.intervals == large.written.intervals, parsed.corrections == large.written.corrections else {
                throw BenchError("\(parsed.intervals) of the \(large.written.intervals) intervals and \(parsed.corrections) of the \(large.written.corrections) corrections written parse back")
            }
            reportTimes.append(reportTime)
            parseTimes.append(parseTime)
        }
        try sampledReport()

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

        let stalled = try stalledReaders(context, now: now)
        // Failing alone: the one-device figures stand (a daemon of a release before devices
        // lists none, and is still measured on them).
        let devices: Figure
        do {
            devices = try reportOverDevices(context, now: now)
        } catch {
            context.progress("history: report over 3 devices FAILED: \(error)")
            devices = Figure(.historyReportDevices, failure: error.description)
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
            Figure(.memoryHistory, value: Double(peak.ownedKiB - ownedBefore) / 1024, details: [
                "owned_before_mib": JSONReport.number(Double(ownedBefore) / 1024),
                "owned_peak_mib": JSONReport.number(Double(peak.ownedKiB) / 1024),
                "resident_before_mib": JSONReport.number(Double(residentBefore) / 1024),
                "resident_peak_mib": JSONReport.number(Double(peak.residentKiB) / 1024),
                "samples": .int(Int64(peak.samples)),
                "reports": .int(Int64(sampledReports)),
            ]),
            Figure(.historyLogToday, value: largeTimes.median() ?? 0, baseline: smallTimes.median(), details: [
                "intervals": .int(Int64(large.written.intervals)),
                "baseline_intervals": .int(Int64(small.written.intervals)),
                "today": .int(Int64(large.written.today)),
                "runs_per_side": .int(Int64(largeTimes.count)),
                "max_ms": JSONReport.number(largeTimes.maximum ?? 0),
                "baseline_max_ms": JSONReport.number(smallTimes.maximum ?? 0),
            ]),
            stalled,
            devices,
        ]
    }

    /// `swctl report` over a history of `historyIntervals` intervals and `historyCorrections`
    /// corrections dealt out among this device and two peers (`HistoryFiles.write`'s
    /// `peers`), against swbench parsing every month of the three folders, timed as the
    /// one-device figure is: one report first not timed (it warms the page cache and builds
    /// the correction index from every device's months), then each report beside a parse.
    /// The daemon must list the three devices (`Devices`), or the figure fails.
    private static func reportOverDevices(_ context: BenchContext, now: Int64) throws(BenchError) -> Figure {
        let plan = context.plan
        let historyDirectory = try context.subdirectory("history-devices") + "/state/history"
        let start = Now.boot()
        let written = try HistoryFiles.write(
            plan.historyIntervals, today: plan.historyToday, corrections: plan.historyCorrections, peers: 2, now: now, into: historyDirectory
        )
        context.progress("history: 3 devices, \(written.intervals) intervals and \(written.corrections) corrections (\(written.tracks) tracks, \(written.crossDevice) of another device's interval; \(written.bytes) bytes in \(written.files) files) written in \(Int((Now.boot() - start).inMilliseconds)) ms, \(plan.historyRuns) report(s)")
        let daemon = try context.startDaemon("history-devices")
        defer { daemon.stop() }
        let report = [context.options.swctlPath, "--socket", daemon.socketPath, "report"]
        _ = try time(report)
        let connection = try daemon.connect()
        let listed = try connection.roundTrip(VarlinkCall(method: "io.stopwatchd.Devices", parameters: [:]).message)
        connection.close()
        let devices = occurrences(of: Array(#""this":"#.utf8), in: listed)
        guard devices == written.deviceDirectories.count else {
            throw BenchError("the daemon lists \(devices) devices of the \(written.deviceDirectories.count) written: \(String(decoding: listed.prefix(300), as: UTF8.self))")
        }
        var reportTimes = Samples(), parseTimes = Samples()
        for _ in 0..<plan.historyRuns {
            let reportTime = try time(report)
            let start = Now.boot()
            let parsed = try HistoryFiles.parseAll(in: written.deviceDirectories)
            let parseTime = (Now.boot() - start).inMilliseconds
            guard parsed.intervals == written.intervals, parsed.corrections == written.corrections else {
                throw BenchError("\(parsed.intervals) of the \(written.intervals) intervals and \(parsed.corrections) of the \(written.corrections) corrections written parse back")
            }
            reportTimes.append(reportTime)
            parseTimes.append(parseTime)
        }
        return Figure(.historyReportDevices, value: reportTimes.median() ?? 0, baseline: parseTimes.median(), details: [
            "devices": .int(Int64(written.deviceDirectories.count)),
            "intervals": .int(Int64(written.intervals)),
            "corrections": .int(Int64(written.corrections)),
            "tracks": .int(Int64(written.tracks)),
            "cross_device_corrections": .int(Int64(written.crossDevice)),
            "bytes": .int(Int64(written.bytes)),
            "files": .int(Int64(written.files)),
            "runs": .int(Int64(reportTimes.count)),
            "report_max_ms": JSONReport.number(reportTimes.maximum ?? 0),
            "parse_max_ms": JSONReport.number(parseTimes.maximum ?? 0),
        ])
    }

    /// `historyStalledReaders` connections call History with `more` over a history of
    /// `historyStalledIntervals` and read nothing. The figure is the most the daemon owns
    /// (Pss_Anon + Pss_Shmem, SPEC §7) from then until it is idle (its CPU time unchanged for
    /// half a second), sampled every 2 ms; VmRSS beside it. Then each reads its stream to the
    /// end, one after the other, each checked complete: every interval, the last reply
    /// without `continues`.
    private static func stalledReaders(_ context: BenchContext, now: Int64) throws(BenchError) -> Figure {
        let plan = context.plan
        let history = try prepare(context, "history-stalled", intervals: plan.historyStalledIntervals, corrections: 0, now: now)
        let expected = history.written.intervals
        let daemon = try context.startDaemon("history-stalled")
        defer { daemon.stop() }
        let call = VarlinkCall(method: "io.stopwatchd.History", parameters: [:], more: true).message
        // One History read whole first, so that what the first costs once is in "before".
        let warmUp = try daemon.connect()
        try warmUp.sendOrThrow(call)
        _ = try readStream(warmUp, expecting: expected)
        warmUp.close()
        guard let ownedBefore = ProcFS.ownedKiB(of: daemon.pid), let residentBefore = ProcFS.residentKiB(of: daemon.pid) else {
            throw BenchError("cannot read the daemon's smaps_rollup or VmRSS")
        }

        context.progress("history: \(plan.historyStalledReaders) readers call History over \(expected) intervals and read nothing")
        var connections: [MessageConnection] = []
        defer { connections.forEach { $0.close() } }
        let stallStart = Now.boot()
        for _ in 0..<plan.historyStalledReaders {
            let connection = try daemon.connect()
            connections.append(connection)
            try connection.sendOrThrow(call)
        }
        var ownedPeak = ownedBefore, residentPeak = residentBefore, samples = 0
        var lastCPU = ProcFS.cpuSeconds(of: daemon.pid) ?? 0
        var quietSince = Now.boot()
        while Now.boot() - quietSince < .milliseconds(500) {
            guard Now.boot() - stallStart < .seconds(120) else { throw BenchError("the daemon was still busy after 120 s") }
            ownedPeak = max(ownedPeak, ProcFS.ownedKiB(of: daemon.pid) ?? 0)
            residentPeak = max(residentPeak, ProcFS.residentKiB(of: daemon.pid) ?? 0)
            samples += 1
            let cpu = ProcFS.cpuSeconds(of: daemon.pid) ?? 0
            if cpu != lastCPU {
                lastCPU = cpu
                quietSince = Now.boot()
            }
            CurrentProcess.sleep(for: .milliseconds(2))
        }
        let stallTime = Now.boot() - stallStart

        context.progress("history: the \(plan.historyStalledReaders) readers read")
        let readStart = Now.boot()
        var replies = 0
        for connection in connections { replies += try readStream(connection, expecting: expected) }
        let readTime = Now.boot() - readStart
        return Figure(.memoryHistoryStalled, value: Double(ownedPeak) / 1024, details: [
            "readers": .int(Int64(plan.historyStalledReaders)),
            "intervals": .int(Int64(expected)),
            "owned_before_mib": JSONReport.number(Double(ownedBefore) / 1024),
            "resident_before_mib": JSONReport.number(Double(residentBefore) / 1024),
            "resident_peak_mib": JSONReport.number(Double(residentPeak) / 1024),
            "samples": .int(Int64(samples)),
            "until_idle_ms": JSONReport.number(stallTime.inMilliseconds),
            "read_all_ms": JSONReport.number(readTime.inMilliseconds),
            "replies": .int(Int64(replies)),
        ])
    }

    /// Reads History replies on `connection` to the last; the replies read. Not every
    /// interval parsed: counted by their `"elapsed_ms":` key, which each has once.
    private static func readStream(_ connection: MessageConnection, expecting expected: Int) throws(BenchError) -> Int {
        let key = Array(#""elapsed_ms":"#.utf8)
        let continues = Array(#","continues":true}"#.utf8)
        var intervals = 0, replies = 0
        while true {
            let message: [UInt8]
            do {
                message = try connection.receive()
            } catch {
                throw BenchError("a History stream ended after \(intervals) of \(expected) intervals: \(error)")
            }
            replies += 1
            guard message.starts(with: Array(#"{"parameters":{"intervals":["#.utf8)) else {
                throw BenchError("History replied \(String(decoding: message.prefix(200), as: UTF8.self))")
            }
            intervals += occurrences(of: key, in: message)
            guard message.count >= continues.count, message.suffix(continues.count).elementsEqual(continues) else { break }
        }
        guard intervals == expected else { throw BenchError("a History stream brought \(intervals) of \(expected) intervals") }
        return replies
    }

    private static func occurrences(of pattern: [UInt8], in bytes: [UInt8]) -> Int {
        var count = 0
        bytes.withUnsafeBytes { all in
            var index = 0
            while let found = ByteSearch.firstIndex(of: pattern[0], in: all, from: index) {
                if found + pattern.count <= all.count, pattern.indices.allSatisfy({ all[found + $0] == pattern[$0] }) { count += 1 }
                index = found + 1
            }
        }
        return count
    }

    /// Writes a history of `intervals` into the state directory of daemon `name`.
    private static func prepare(_ context: BenchContext, _ name: String, intervals: Int, corrections: Int, now: Int64) throws(BenchError) -> (written: HistoryFiles.Written, historyDirectory: String) {
        let historyDirectory = try context.subdirectory(name) + "/state/history"
        let start = Now.boot()
        let written = try HistoryFiles.write(intervals, today: context.plan.historyToday, corrections: corrections, now: now, into: historyDirectory)
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
