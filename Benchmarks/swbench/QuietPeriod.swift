import Glibc
import LinuxSystem
import Varlink

/// A daemon left alone, watched from /proc: its wake-ups over a window, counted beside those
/// of an idle `/bin/sleep` (the baseline, which should show 0), and both resident sizes.
struct QuietPeriod {
    let daemonWakeups: Int
    let sleepWakeups: Int
    let window: Duration
    let daemonThreads: Int
    let daemonResidentMiB: Double
    let sleepResidentMiB: Double

    /// Lets `daemon` (just READY) settle for `settle`, then counts over `window`.
    init(of daemon: DaemonUnderTest, settle: Duration, window: Duration) throws(BenchError) {
        let sleeper: ChildProcess
        do {
            sleeper = try ChildProcess("/bin/sleep", ["3600"])
        } catch {
            throw BenchError("cannot start /bin/sleep: \(error)")
        }
        defer { sleeper.stop(SIGKILL) }
        CurrentProcess.sleep(for: settle)
        daemonResidentMiB = daemon.residentMiB ?? 0
        sleepResidentMiB = ProcFS.residentKiB(of: sleeper.pid).map { Double($0) / 1024 } ?? 0
        let daemonBefore = ThreadSwitchCounts(of: daemon.pid), sleepBefore = ThreadSwitchCounts(of: sleeper.pid)
        let start = Now.boot()
        CurrentProcess.sleep(for: window)
        let daemonAfter = ThreadSwitchCounts(of: daemon.pid), sleepAfter = ThreadSwitchCounts(of: sleeper.pid)
        self.window = Now.boot() - start
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
