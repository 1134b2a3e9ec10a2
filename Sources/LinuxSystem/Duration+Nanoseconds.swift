extension Duration {
    /// The whole nanoseconds in this duration, rounded toward zero; beyond ±292 years,
    /// which fit no `Int64`, it saturates instead of trapping.
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !overflow, !overflowAgain else { return seconds < 0 ? .min : .max }
        return total
    }

    /// The whole milliseconds in this duration, rounded toward zero.
    package var milliseconds: Int64 {
        nanoseconds / 1_000_000
    }
}
