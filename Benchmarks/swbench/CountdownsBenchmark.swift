import LinuxSystem
import StopwatchProtocol
import Varlink

/// The `countdowns` group: a daemon restoring 10,000 counting countdowns nobody watches, a
/// few expiring each second while it is watched from /proc and the rest far ahead. Its
/// wake-ups over the window against one per expiry (and an idle `/bin/sleep`), and its
/// armed timers: one `CLOCK_BOOTTIME` timerfd for all the countdowns. Its switches per
/// expiry against one small append with `fdatasync` by swbench's own thread (issue 30).
enum CountdownsBenchmark {
    static func run(_ context: BenchContext) throws(BenchError) -> [Figure] {
        let plan = context.plan
        let count = plan.unwatchedCountdowns
        let stateFiles = try context.subdirectory("countdowns") + "/state/stopwatches"
        // The soon ones span the settling and the window, and 10 s beyond for the start: a
        // restore of 10,000 can take seconds on a busy machine, and 10 s cover it. So
        // expiries fall all through the window, a whole number per second.
        let first = Duration.seconds(1)
        let span = plan.settle + plan.wakeupWindow + .seconds(10)
        let soonCount = Int(span.nanoseconds / plan.countdownExpirySpacing.nanoseconds)
        context.progress("writing \(count) counting countdowns, \(soonCount) of them expiring \(DurationText.string(plan.countdownExpirySpacing)) apart")
        let written = try CountdownStateFiles.write(count, soon: soonCount, firstAfter: first, spacing: plan.countdownExpirySpacing, into: stateFiles)
        let soonNames = written.soon.map(\.name)
        let saves = plan.isSmoke ? 5 : 20
        let saveSwitches = try DurableWriteCost.switchesPerSave(
            count: saves, in: try context.subdirectory("countdowns-saves"), bytes: written.bytes / max(count, 1)
        )
        let appendSwitches = try DurableWriteCost.switchesPerAppend(
            count: saves, in: try context.subdirectory("countdowns-appends"), bytes: TransitionsBenchmark.floorLineBytes
        )

        let daemon = try context.startDaemon("countdowns", arguments: ["--max-stopwatches", "\(count)"])
        defer { daemon.stop() }
        context.progress("\(count) countdowns: settling \(DurationText.string(plan.settle)), then counting wake-ups for \(DurationText.string(plan.wakeupWindow))")
        var expiredBefore = 0, expiredAfter = 0
        let quiet = try QuietPeriod(
            of: daemon, settle: plan.settle, window: plan.wakeupWindow,
            atStart: { expiredBefore = CountdownStateFiles.expiredCount(of: soonNames, in: stateFiles) },
            atEnd: { expiredAfter = CountdownStateFiles.expiredCount(of: soonNames, in: stateFiles) }
        )
        let start = quiet.start, end = quiet.end
        // Timers are read at rest, away from an expiry: each one's STATUS= update for
        // systemd is sent 200 ms later on a timer of its own (`StatusReporter`), armed
        // meanwhile, and gone before the next expiry.
        let lastExpiry = written.soon.last { $0.instant <= end }?.instant
        if let lastExpiry { Now.sleep(until: lastExpiry + .milliseconds(300)) }
        let timersReadAfterExpiry = lastExpiry.map { Now.boot() - $0 }
        let timers = TimerDescriptorState.all(of: daemon.pid)
        guard daemon.process.isRunning else { throw BenchError("stopwatchd ended during the window") }

        let window = quiet.window
        let wakeups = quiet.daemonWakeups
        let sleepWakeups = quiet.sleepWakeups
        let expiries = written.expiries(from: start, to: end)
        guard expiries > 0 else {
            throw BenchError("no countdown expired in the window (the last of them at \(written.soon.last.map { "\($0.instant)" } ?? "-"), the window \(start) to \(end)): the start took too long")
        }
        let daemonExpiries = expiredAfter - expiredBefore
        // The daemon saves an expiry a queue turn after telling it: one at either edge of
        // the window may be seen on the other side of it.
        let expiriesConfirmed = abs(daemonExpiries - expiries) <= 1
        if !expiriesConfirmed {
            context.progress("the daemon recorded \(daemonExpiries) expiries in the window, where \(expiries) instants fell")
        }
        let perSecond = { (count: Int) in Double(count) / window.inSeconds }

        let armed = timers.filter(\.isArmed)
        // The wall-clock step watch is armed a century ahead and never expires: it is not a
        // timer the countdowns cost, and is counted apart.
        let expiring = armed.filter { !$0.watchesWallClockSteps }
        let allOnBootClock = expiring.allSatisfy { $0.clockID == TimerDescriptorState.bootClock }
        return [
            Figure(
                .countdownWakeups, value: perSecond(wakeups) - perSecond(expiries), baseline: perSecond(sleepWakeups),
                details: [
                    "window_s": JSONReport.number(window.inSeconds),
                    "countdowns": .int(Int64(count)),
                    "daemon_wakeups": .int(Int64(wakeups)),
                    "daemon_wakeups_per_s": JSONReport.number(perSecond(wakeups)),
                    "expiries_in_window": .int(Int64(expiries)),
                    "expiries_per_s": JSONReport.number(perSecond(expiries)),
                    "expiries_recorded_by_daemon": .int(Int64(daemonExpiries)),
                    "daemon_wakeups_per_expiry": expiries > 0 ? JSONReport.number(Double(wakeups) / Double(expiries)) : .null,
                    "durable_save_switches": JSONReport.number(saveSwitches),
                    "durable_saves_timed": .int(Int64(saves)),
                    "sleep_wakeups": .int(Int64(sleepWakeups)),
                    "daemon_threads": .int(Int64(quiet.daemonThreads)),
                ],
                otherConditionsMet: expiriesConfirmed
            ),
            Figure(
                .expirySwitches, value: expiries > 0 ? Double(wakeups) / Double(expiries) : .infinity, baseline: appendSwitches,
                details: [
                    "daemon_switches": .int(Int64(wakeups)),
                    "expiries_in_window": .int(Int64(expiries)),
                    "floor_appends_timed": .int(Int64(saves)),
                    "replace_switches": JSONReport.number(saveSwitches),
                ],
                otherConditionsMet: expiriesConfirmed
            ),
            Figure(
                .countdownTimers, value: Double(expiring.count),
                details: [
                    "timerfds": .array(timers.map(\.json)),
                    "armed": .int(Int64(armed.count)),
                    "armed_wall_clock_step_watch": .int(Int64(armed.count - expiring.count)),
                    "armed_on_boot_clock": .bool(allOnBootClock),
                    "read_after_last_expiry_ms": timersReadAfterExpiry.map { JSONReport.number($0.inMilliseconds) } ?? .null,
                ],
                otherConditionsMet: allOnBootClock
            ),
        ]
    }
}
