/// One fan-out measured: what was delivered, and what sending it cost.
struct FanOutResult {
    var statistics: TickStatistics
    /// CPU time of the sender over the measurement, as a percentage of one core.
    let cpuPercent: Double
    /// Watch connections the sender closed.
    let closed: Int
}
