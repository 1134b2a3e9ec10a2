import StopwatchDaemon
import Glibc
import LinuxSystem

/// The run: every group in turn (drift alongside), then the table and the JSON.
enum Swbench {
    /// Returns the exit status: 0 when every figure was measured (met or not), 1 otherwise.
    static func run(_ options: BenchOptions) throws(BenchError) -> CInt {
        Signals.ignore(SIGPIPE)
        let openFiles = ResourceLimits.raiseOpenFileLimit()
        guard openFiles >= 2 * 1_000 + 100 else {
            throw BenchError("the open file limit is \(openFiles); 1,000 watchers and their baseline need 2,100")
        }
        for binary in [options.daemonPath, options.swctlPath] where (try? FileSystem.kind(at: binary)) != .regular {
            throw BenchError("\(binary) not found: build it (swift build -c release --static-swift-stdlib) or pass --daemon/--swctl")
        }
        let directory: TemporaryDirectory
        do {
            directory = try TemporaryDirectory()
        } catch {
            throw BenchError("cannot create a temporary directory: \(error)")
        }
        defer { directory.remove() }
        let plan = BenchPlan(smoke: options.smoke, driftSeconds: options.driftSeconds)
        let context = BenchContext(options: options, plan: plan, directory: directory)
        let startedWall = ClockReading.now().wall
        context.progress("\(plan.isSmoke ? "smoke run" : "full run") in \(directory.path); daemon \(options.daemonPath)")
        let buildDirectory = FileSystem.directoryName(of: BenchOptions.executablePath())
        for warning in BinaryAge.warnings(for: [options.daemonPath, options.swctlPath], buildDirectory: buildDirectory) {
            context.progress("WARNING: \(warning)")
        }

        var figures: [Figure] = []
        func measure(_ group: BenchGroup, _ kinds: [FigureKind], _ body: () throws(BenchError) -> [Figure]) {
            guard options.runs(group) else { return }
            do {
                figures += try body()
            } catch {
                context.progress("\(group.rawValue) FAILED: \(error)")
                figures += kinds.map { Figure($0, failure: error.description) }
            }
        }

        var drift: DriftMeasurement?
        measure(.drift, [.drift]) { () throws(BenchError) in
            drift = try DriftMeasurement(context)
            return []
        }
        measure(.calls, [.getRoundTrip, .getRoundTripUnpinned, .throughput, .getCPU, .swctlStatus]) { () throws(BenchError) in try CallsBenchmark.run(context) }
        var idleMemory: MemoryReading?
        measure(.idle, [.readyEmpty, .memoryIdle, .wakeupsIdle]) { () throws(BenchError) in
            let outcome = try IdleBenchmark.run(context)
            idleMemory = outcome.idleMemory
            return outcome.figures
        }
        measure(.loaded, [.readyLoaded, .memoryStopwatches, .wakeupsCounting]) { () throws(BenchError) in
            try LoadedBenchmark.run(context, idleMemory: idleMemory)
        }
        measure(.fanout, [.fanOutDelivery, .fanOutDelay, .fanOutCPU, .tickAccuracy, .memoryWatchers]) { () throws(BenchError) in
            try FanOutBenchmark.run(context)
        }
        measure(.expiry, [.expiryDelay]) { () throws(BenchError) in try ExpiryBenchmark.run(context, .countdowns) }
        measure(.phase, [.phaseDelay]) { () throws(BenchError) in try ExpiryBenchmark.run(context, .cycles) }
        measure(.countdowns, [.countdownWakeups, .expirySwitches, .countdownTimers]) { () throws(BenchError) in try CountdownsBenchmark.run(context) }
        measure(.exitidle, [.exitIdleProcesses, .exitIdleFirstStatus]) { () throws(BenchError) in try ExitIdleBenchmark.run(context) }
        measure(.transitions, [.startCost, .lapCost, .stopCost]) { () throws(BenchError) in try TransitionsBenchmark.run(context) }
        measure(.laps, [.lapAt10, .lapAt1000, .lapAt10000]) { () throws(BenchError) in try LapsBenchmark.run(context) }
        measure(.history, [.historyReport, .memoryHistory, .historyLogToday, .memoryHistoryStalled, .historyReportDevices]) { () throws(BenchError) in
            try HistoryBenchmark.run(context)
        }
        if let measurement = drift {
            measure(.drift, [.drift]) { () throws(BenchError) in [try measurement.finish(context)] }
            drift = nil
        }

        let order = FigureKind.allCases
        figures.sort { order.firstIndex(of: $0.kind)! < order.firstIndex(of: $1.kind)! }
        print(ResultTable.text(figures))
        print("\n(\(plan.isSmoke ? "smoke run: too short for stable figures" : "full run"); \(sysconf(CInt(_SC_NPROCESSORS_ONLN))) cores)")
        if let path = options.jsonPath {
            do {
                try JSONReport.write(JSONReport.json(figures, plan: plan, startedWall: startedWall), to: path)
            } catch {
                throw BenchError("cannot write \(path): \(error)")
            }
        }
        return figures.allSatisfy { $0.value != nil } ? 0 : 1
    }
}
