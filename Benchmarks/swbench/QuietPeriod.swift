import Glibc
import LinuxSystem
import Varlink

/// A daemon left alone, watched from /proc: its wake-ups over a window, counted beside those
/// of an idle `/bin/sleep` (the baseline, which should show 0), and both one's memory.
struct QuietPeriod {
    let daemonWakeups: Int
    let sleepWakeups: Int
    /// The window, on the boot clock.
    let start: Duration
    let end: Duration
    var window: Duration { end - start }
    let daemonThreads: Int
    /// Read after the settling, before the window.
    let daemonMemory: MemoryReading?
    let sleepMemory: MemoryReading?

    /// Lets `daemon` (just READY) settle for `settle`, then counts over `window`;
    /// `atStart` and `atEnd` read what else the caller compares over the same window.
    init(
        of daemon: DaemonUnderTest, settle: Duration, window: Duration,
        atStart: () -> Void = {}, atEnd: () -> Void = {}
    ) throws(BenchError) {
        let sleeper: ChildProcess
        do {
            sleeper = try ChildProcess("/bin/sleep", ["3600"])
        } catch {
            throw BenchError("cannot start /bin/sleep: \(error)")
        }
        defer { sleeper.stop(SIGKILL) }
        CurrentProcess.sleep(for: settle)
        daemonMemory = daemon.memory
        sleepMemory = MemoryReading(of: sleeper.pid)
        atStart()
        let daemonBefore = ThreadSwitchCounts(of: daemon.pid), sleepBefore = ThreadSwitchCounts(of: sleeper.pid)
        start = Now.boot()
        CurrentProcess.sleep(for: window)
        let daemonAfter = ThreadSwitchCounts(of: daemon.pid), sleepAfter = ThreadSwitchCounts(of: sleeper.pid)
        end = Now.boot()
        atEnd()
        daemonWakeups = daemonAfter.wakeups(since: daemonBefore)
        sleepWakeups = sleepAfter.wakeups(since: sleepBefore)
        daemonThreads = daemonAfter.threadCount
    }

    /// Wake-ups per `period`, scaled from the window.
    func daemonRate(per period: Duration) -> Double { Double(daemonWakeups) * period.inSeconds / window.inSeconds }
    func sleepRate(per period: Duration) -> Double { Double(sleepWakeups) * period.inSeconds / window.inSeconds }

    var details: JSONObject {
        [
            "window_s": JSONReport.number(window.inSeconds),
            "daemon_wakeups": .int(Int64(daemonWakeups)),
            "sleep_wakeups": .int(Int64(sleepWakeups)),
            "daemon_threads": .int(Int64(daemonThreads)),
        ]
    }
}
