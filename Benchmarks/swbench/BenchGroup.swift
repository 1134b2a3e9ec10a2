/// The measurements swbench makes, grouped by the daemon each needs.
enum BenchGroup: String, CaseIterable {
    /// Get round trip and throughput against the echo server; swctl status against the C
    /// client and /bin/true.
    case calls
    /// 1,000 watchers: delivery, delay, CPU, tick accuracy, memory.
    case fanout
    /// An empty daemon: time to READY, memory, wake-ups.
    case idle
    /// 10,000 counting stopwatches restored: time to READY, memory, wake-ups.
    case loaded
    /// Watched countdowns expiring one after another: delay from instant to `expired`.
    case expiry
    /// Watched automatic cycles whose first phases end one after another: delay from
    /// instant to `phase`.
    case phase
    /// One stopwatch counting for the drift period, alongside everything else.
    case drift
    /// 10,000 counting countdowns nobody watches: wake-ups against expiries, armed timers.
    case countdowns
    /// Exit on idle behind systemd-socket-activate: no process left, the first swctl status.
    case exitidle
    /// Start, Lap and Stop against one small append with `fdatasync`, the floor.
    case transitions
    /// Lap on stopwatches holding 10, 1,000 and 10,000 laps: time per call.
    case laps
    /// A history of 1,000,000 intervals: `swctl report` over it, `swctl log --since today`;
    /// and 256 History readers that stall, then read.
    case history
}
