import LinuxSystem

/// `CLOCK_REALTIME`, the wall clock of the machine.
struct SystemWallClock: WallClock {
    func nowMilliseconds() -> Int64 {
        Posix.clockTime(.realtime).milliseconds
    }
}
