import LinuxSystem
/// The wall clock, in milliseconds since the Unix epoch: where the history's intervals are
/// placed. Injected, so that tests set it by hand (the boot clock alone cannot say when).
protocol WallClock: Sendable {
    func nowMilliseconds() -> Int64
    /// To the nanosecond, where the clock knows it: what "that long ago" is measured against,
    /// so that two dated transitions are apart by exactly the difference of their instants.
    func now() -> Duration
}

extension WallClock {
    func now() -> Duration { .milliseconds(nowMilliseconds()) }
}

/// `CLOCK_REALTIME`, the wall clock of the machine.
struct SystemWallClock: WallClock {
    func nowMilliseconds() -> Int64 {
        Posix.clockTime(.realtime).milliseconds
    }

    func now() -> Duration {
        Posix.clockTime(.realtime)
    }
}
