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
        let attoseconds = self.attoseconds
        // 10^15 = 2^15 · 30,517,578,125: below 2^79 attoseconds (7 days), a shift and one
        // 64-bit division, where dividing the 128-bit count is a call (`__divti3`), paid for
        // every lap of a reply (5% of a Lap on 10,000 laps in `perf`). floor(floor(x / a) / b)
        // is floor(x / ab) for x ≥ 0.
        if attoseconds >= 0, attoseconds >> 79 == 0 {
            return Int64(UInt64(truncatingIfNeeded: attoseconds >> 15) / 30_517_578_125)
        }
        return nanoseconds / 1_000_000
    }
}
