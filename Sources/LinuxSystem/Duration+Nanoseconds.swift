extension Duration {
    /// The whole nanoseconds in this duration, rounded toward zero; beyond ±292 years,
    /// which fit no `Int64`, it saturates instead of trapping.
    package var nanoseconds: Int64 {
        // From the attoseconds, not `components`: that splits into seconds with 128-bit
        // arithmetic of its own, slower than this one division, and a Lap converts every lap
        // (up to 10,000; docs/PERFORMANCE.md, "Laps").
        let whole = attoseconds / 1_000_000_000
        guard let nanoseconds = Int64(exactly: whole) else { return whole < 0 ? .min : .max }
        return nanoseconds
    }

    /// The whole milliseconds in this duration, rounded toward zero.
    package var milliseconds: Int64 {
        nanoseconds / 1_000_000
    }
}
