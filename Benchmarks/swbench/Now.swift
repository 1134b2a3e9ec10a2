import LinuxSystem
import StopWatchCore

/// The clock every time in swbench is read on: `CLOCK_BOOTTIME`, the clock the daemon
/// counts on, so a daemon's elapsed time and a receipt time can be compared directly.
enum Now {
    static func boot() -> Duration { BootClock().now() }

    /// Sleeps until the boot clock reads `instant` (at once if it already has).
    static func sleep(until instant: Duration) {
        let remaining = instant - boot()
        if remaining > .zero { CurrentProcess.sleep(for: remaining) }
    }
}
