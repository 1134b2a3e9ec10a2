import StopwatchProtocol

/// Adds up intervals as `History` batches arrive, into time per name and, with `byDay`,
/// per local day and name. Memory grows with names × days, never with intervals.
///
/// Each interval is clipped to [`since`, `until`); an open one counts up to `now`. The time
/// counted is the interval's `elapsed_ms` (the boot clock), spread over its wall-clock span
/// in proportion: when the wall clock was stepped meanwhile, the parts still add up to the
/// elapsed time, and rounding never loses or adds a millisecond between days.
package struct ReportAggregator {
    private let since: Int64?
    private let until: Int64?
    private let now: Int64
    private let byDay: Bool
    private var perName: [NameKey: Int64] = [:]
    /// Keyed by the day's local 00:00 (ms since the epoch).
    private var perDay: [Int64: [NameKey: Int64]] = [:]

    package init(since: Int64?, until: Int64?, now: Int64, byDay: Bool) {
        self.since = since
        self.until = until
        self.now = now
        self.byDay = byDay
    }

    package mutating func add(_ interval: Interval) {
        let key = NameKey(interval.name)
        let start = interval.startMs
        let end = max(interval.endMs ?? now, start)
        let lower = max(start, since ?? start)
        let upper = min(end, until ?? end)
        let elapsed = interval.elapsedMs
        if end == start {
            // No wall-clock span (a clock step back, or an instant): all of it on its start.
            guard lower == start, until.map({ start < $0 }) ?? true else { return }
            record(key, elapsed, on: start)
            return
        }
        guard lower < upper else { return }
        guard byDay else {
            record(key, Self.scaled(upper - start, elapsed, end - start) - Self.scaled(lower - start, elapsed, end - start), on: lower)
            return
        }
        let wall = end - start
        var from = lower
        while from < upper {
            // A day Glibc cannot compute ends the splitting: the rest counts on this day.
            let next = LocalTime.startOfDay(from, addingDays: 1).map { $0 > from ? min($0, upper) : upper } ?? upper
            let counted = Self.scaled(from - start, elapsed, wall)
            let share = Self.scaled(next - start, elapsed, wall) - counted
            if share > 0 {
                record(key, share, on: from)
            } else if next < upper {
                // Days with nothing counted on them (an interval whose span is far longer than
                // its time, as only a damaged one is) are skipped, not walked one by one: to
                // the day where the count next grows, if it does.
                guard counted < elapsed else { return }
                let grows = start + Self.span(reaching: counted + 1, elapsed, wall)
                if grows > next {
                    from = max(next, LocalTime.startOfDay(min(grows, upper)) ?? next)
                    continue
                }
            }
            from = next
        }
    }

    /// The least `part` with `scaled(part, elapsed, wall) >= count`: ⌈`count` × `wall` /
    /// `elapsed`⌉, for 0 < `count` ≤ `elapsed`, in 128 bits; at most `wall`.
    static func span(reaching count: Int64, _ elapsed: Int64, _ wall: Int64) -> Int64 {
        let (quotient, remainder) = elapsed.dividingFullWidth(count.multipliedFullWidth(by: wall))
        return remainder > 0 ? quotient + 1 : quotient
    }

    /// The totals so far.
    package var totals: ReportTotals {
        let names = Self.rows(perName)
        var days: [ReportTotals.Day] = []
        for (dayStart, names) in perDay.sorted(by: { $0.key < $1.key }) {
            let rows = Self.rows(names)
            let label = LocalTime.dateTime(dayStart)?.dayText ?? "\(dayStart)"
            days.append(ReportTotals.Day(day: label, names: rows, total: Self.sum(rows)))
        }
        return ReportTotals(names: names, days: days, total: Self.sum(names))
    }

    private mutating func record(_ key: NameKey, _ milliseconds: Int64, on instant: Int64) {
        perName[key] = Self.add(perName[key] ?? 0, milliseconds)
        guard byDay, let day = LocalTime.startOfDay(instant) else { return }
        perDay[day, default: [:]][key] = Self.add(perDay[day]?[key] ?? 0, milliseconds)
    }

    /// ⌊`part` × `elapsed` / `wall`⌋ for 0 ≤ `part` ≤ `wall`, 0 < `wall`: at most
    /// `elapsed`, so it fits, whatever the daemon sent.
    static func scaled(_ part: Int64, _ elapsed: Int64, _ wall: Int64) -> Int64 {
        guard part != wall else { return elapsed }
        let product = part.multipliedFullWidth(by: elapsed)
        return wall.dividingFullWidth(product).quotient
    }

    /// Saturating: totals of received data must not trap.
    private static func add(_ lhs: Int64, _ rhs: Int64) -> Int64 {
        let (sum, overflow) = lhs.addingReportingOverflow(rhs)
        return overflow ? .max : sum
    }

    private static func sum(_ rows: [ReportTotals.Row]) -> Int64 {
        rows.reduce(0) { add($0, $1.milliseconds) }
    }

    private static func rows(_ totals: [NameKey: Int64]) -> [ReportTotals.Row] {
        totals.sorted { lhs, rhs in
            lhs.value != rhs.value ? lhs.value > rhs.value : NameKey.precedes(lhs.key, rhs.key)
        }
        .map { ReportTotals.Row(name: $0.key.name, milliseconds: $0.value) }
    }
}
