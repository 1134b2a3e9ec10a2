import LinuxSystem
/// The wall clock, in milliseconds since the Unix epoch: where the history's intervals are
/// placed. Injected, so that tests set it by hand (the boot clock alone cannot say when).
protocol WallClock: Sendable {
    func nowMilliseconds() -> Int64
}

/// `CLOCK_REALTIME`, the wall clock of the machine.
struct SystemWallClock: WallClock {
    func nowMilliseconds() -> Int64 {
        Posix.clockTime(.realtime).milliseconds
    }
}
