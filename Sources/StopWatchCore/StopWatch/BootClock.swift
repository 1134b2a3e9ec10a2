import LinuxSystem

/// `CLOCK_BOOTTIME`: monotonic, and it keeps running while the system is suspended, as a
/// physical stopwatch would. Resets at boot.
public struct BootClock: StopWatchClock {
    public init() {}

    public func now() -> Duration {
        Posix.clockTime(.boot)
    }
}
