import LinuxSystem

/// `CLOCK_BOOTTIME`: monotonic, and it keeps running while the system is suspended, as a
/// physical stopwatch would. Resets at boot. Its awake reading is `CLOCK_MONOTONIC`, which
/// stops in suspend.
public struct BootClock: StopWatchClock {
    public init() {}

    public func now() -> Duration {
        Posix.clockTime(.boot)
    }

    public func awakeNow() -> Duration {
        Posix.clockTime(.monotonic)
    }
}
