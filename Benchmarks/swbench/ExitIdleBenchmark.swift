import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// The `exitidle` group: `stopwatchd --exit-idle` behind `systemd-socket-activate`, cycle
/// after cycle: a fresh activator listens (untimed), the first `swctl status bench` is timed
/// end to end (activation, exec, restore, call, print, exit), and the daemon must then be
/// gone within its idle period and a margin: no process left, no resident memory. The
/// baseline is the same `swctl status` against the same binary on the same state, running.
enum ExitIdleBenchmark {
    static func run(_ context: BenchContext) throws(BenchError) -> [Figure] {
        let activator = SocketActivatedDaemon.activatorPath
        guard (try? FileSystem.kind(at: activator)) == .regular else {
            throw BenchError("\(activator) is not installed (Debian: the systemd package); exit on idle needs a socket activator")
        }
        let plan = context.plan
        let swctl = context.options.swctlPath
        let name = "bench"

        // Warm: a running daemon, which also starts `bench` counting in the state directory
        // the activated daemons restore.
        context.progress("exit on idle: swctl status against a running daemon, \(plan.exitIdleWarmRuns) runs")
        var warm = Samples()
        let stateDirectory: String
        do {
            let daemon = try context.startDaemon("exitidle")
            defer { daemon.stop() }
            stateDirectory = daemon.stateDirectory
            let control = try daemon.connect()
            defer { control.close() }
            _ = try control.stopwatch(.stopwatchd("Start", name: name))
            for run in -3..<plan.exitIdleWarmRuns {
                let time = try timedStatus(swctl, socketPath: daemon.socketPath, name: name)
                if run >= 0 { warm.append(time.inMilliseconds) }
            }
        }

        let period = plan.exitIdlePeriod
        let margin = plan.exitIdleMargin
        context.progress("exit on idle: \(plan.exitIdleCycles) activations through \(activator), idle period \(DurationText.string(period))")
        let directory = try context.subdirectory("exitidle")
        var cold = Samples(), exitedAfter = Samples()
        // The activated process's time on a CPU and waiting for one, from the connection
        // (the exec, the daemon's start) to the reply.
        var coldOnCPU = Samples(), coldWaiting = Samples()
        var left = 0, residentKiBAfter = 0, residentKiBRunning = 0
        var statuses: [CInt] = []
        for _ in 0..<plan.exitIdleCycles {
            let activated = try SocketActivatedDaemon(
                daemonPath: context.options.daemonPath, socketPath: directory + "/activated.sock", stateDirectory: stateDirectory,
                idlePeriod: "\(period.nanoseconds / 1_000_000)ms", logPath: directory + "/daemon.log"
            )
            // The activator's own start (before it listened) is not the daemon's.
            let before = SchedulerStatistics(of: activated.pid)
            let time = try timedStatus(swctl, socketPath: activated.socketPath, name: name)
            let replied = Now.boot()
            cold.append(time.inMilliseconds)
            if let before, let after = SchedulerStatistics(of: activated.pid) {
                coldOnCPU.append((after.onCPU - before.onCPU).inMilliseconds)
                coldWaiting.append((after.waiting - before.waiting).inMilliseconds)
            }
            guard activated.isRunning(as: "stopwatchd") else {
                throw BenchError("after the first call, pid \(activated.pid) is not a running stopwatchd (exit status \(activated.process.waitForExit()))")
            }
            residentKiBRunning = max(residentKiBRunning, ProcFS.residentKiB(of: activated.pid) ?? 0)
            let deadline = replied + period + margin
            while activated.process.isRunning, Now.boot() < deadline {
                CurrentProcess.sleep(for: .milliseconds(5))
            }
            if !activated.process.isRunning {
                exitedAfter.append((Now.boot() - replied).inMilliseconds)
                statuses.append(activated.process.waitForExit())
            }
            // Any process still on this state directory: the activated one, or another.
            let survivors = ProcessTable.processes(withArgument: stateDirectory)
            left += survivors.count
            residentKiBAfter = max(residentKiBAfter, survivors.map { ProcFS.residentKiB(of: $0) ?? 0 }.reduce(0, +))
            if !survivors.isEmpty {
                context.progress("still running \(DurationText.string(period + margin)) after the last reply: pid \(survivors.map(String.init).joined(separator: ", "))")
            }
            // The deinit kills what is left of the activated process.
        }

        // In the order taken (the percentiles sort them).
        let coldSamples = cold.values, warmSamples = warm.values
        let cleanExits = statuses.count == plan.exitIdleCycles && statuses.allSatisfy { $0 == 0 }
        return [
            Figure(
                .exitIdleProcesses, value: Double(left),
                details: [
                    "cycles": .int(Int64(plan.exitIdleCycles)),
                    "idle_period_ms": .int(period.nanoseconds / 1_000_000),
                    "deadline_after_reply_ms": .int((period + margin).nanoseconds / 1_000_000),
                    "resident_kib_after": .int(Int64(residentKiBAfter)),
                    "resident_kib_while_running_max": .int(Int64(residentKiBRunning)),
                    "exit_statuses": .array(statuses.map { .int(Int64($0)) }),
                    "exited_after_reply_ms": .array(exitedAfter.values.map(JSONReport.number)),
                ],
                otherConditionsMet: cleanExits
            ),
            Figure(
                .exitIdleFirstStatus, value: cold.median() ?? 0, baseline: warm.median(),
                details: [
                    "cycles": .int(Int64(cold.count)),
                    "p90_ms": JSONReport.number(cold.percentile(90) ?? 0),
                    "max_ms": JSONReport.number(cold.maximum ?? 0),
                    "samples_ms": .array(coldSamples.map(JSONReport.number)),
                    "daemon_on_cpu_median_ms": JSONReport.number(coldOnCPU.median() ?? 0),
                    "daemon_on_cpu_ms": .array(coldOnCPU.values.map(JSONReport.number)),
                    "daemon_runqueue_wait_median_ms": JSONReport.number(coldWaiting.median() ?? 0),
                    "warm_runs": .int(Int64(warm.count)),
                    "warm_p90_ms": JSONReport.number(warm.percentile(90) ?? 0),
                    "warm_max_ms": JSONReport.number(warm.maximum ?? 0),
                    "warm_samples_ms": .array(warmSamples.map(JSONReport.number)),
                ]
            ),
        ]
    }

    /// `swctl --socket PATH status NAME`, spawned and reaped; a failure is an error.
    private static func timedStatus(_ swctl: String, socketPath: String, name: String) throws(BenchError) -> Duration {
        let run: (time: Duration, status: CInt)
        do {
            run = try ChildProcess.timedRun(swctl, ["--socket", socketPath, "status", name])
        } catch {
            throw BenchError("cannot start \(swctl): \(error)")
        }
        guard run.status == 0 else { throw BenchError("\(swctl) --socket \(socketPath) status \(name) exited \(run.status)") }
        return run.time
    }
}
