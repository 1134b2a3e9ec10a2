import StopwatchProtocol

/// Adds up intervals as `History` batches arrive, into time per name and, with `byDay`,
/// per local day and name. Memory grows with names × days, never with intervals.
///
/// Each interval is clipped to [`since`, `until`); an open one counts up to `now`. The time
/// counted is the interval's `elapsed_ms` (the boot clock), spread over its wall-clock span
/// in proportion: when the wall clock was stepped meanwhile, the parts still add up to the
/// elapsed time, and rounding never loses or adds a millisecond between days.
///
/// By day, the part of an interval inside the range is split at each local midnight when it
/// spans at most `longestSplit` (366 days): at most 367 days walked per interval, whatever
/// it says, and memory O(days that hold time). Days with nothing counted on them (a span
/// far longer than its time, as only a damaged line has) are skipped, not walked: a day
/// that holds time costs a step or two, one that holds none nothing. A longer part (only a stopwatch left
/// counting for over a year has one, or a damaged line from 1970 to 9999) is not spread
/// over thousands of days that hold nothing else, burying those that do: its time goes on
/// one row of its own, labelled with the span it covers (`1970-01-01/9999-12-31`, ISO
/// 8601's interval of days), shared by every such part (the span then covers them all).
/// The totals per name and overall count it as any other.
package struct ReportAggregator {
    /// 366 days: a part of an interval longer than this is not split by day.
    static let longestSplit: Int64 = 366 * 86_400_000

    private let since: Int64?
    private let until: Int64?
    private let now: Int64
    private let byDay: Bool
    /// The names met, by slot: totals are kept by slot, so that an interval costs no hash of
    /// its name (`swctl report` hands the slot of each name once, `slot(for:)`).
    private var keys: [StopwatchKey] = []
    private var slots: [StopwatchKey: Int] = [:]
    /// By slot; nil for a name nothing was counted for (no row).
    private var perName: [Int64?] = []
    /// Keyed by the day's local 00:00 (ms since the epoch), then by slot.
    private var perDay: [Int64: [Int: Int64]] = [:]
    /// The parts longer than `longestSplit`: from the first instant of the earliest to the
    /// last instant of the latest, and their time per slot.
    private var longParts: (first: Int64, last: Int64, names: [Int: Int64])?
    /// The days the splitting stepped through so far, each costing a local midnight or
    /// two (`mktime`): what skipping days with nothing counted bounds.
    private(set) var daysWalked = 0
    /// By group (`add(byDevice:)`, `--by device`; `add(byPhase:)`, `--by phase`): the groups
    /// met (a device, or a phase label; nil: no phase), by slot, and per group slot the time
    /// per name slot. The plain path (`add(slot:…)`) names no group.
    private var groups: [String?] = []
    private var groupSlots: [StopwatchKey: Int] = [:]
    private var unlabelledSlot: Int?
    private var perGroup: [Int: [Int: Int64]] = [:]
    /// The group slot of the interval being added by group; nil on the plain path.
    private var currentGroup: Int?

    package init(since: Int64?, until: Int64?, now: Int64, byDay: Bool) {
        self.since = since
        self.until = until
        self.now = now
        self.byDay = byDay
    }

    /// The slot that `add(slot:…)` takes for `name`.
    package mutating func slot(for name: String) -> Int {
        let key = StopwatchKey(name)
        if let slot = slots[key] { return slot }
        keys.append(key)
        perName.append(nil)
        slots[key] = keys.count - 1
        return keys.count - 1
    }

    package mutating func add(_ interval: Interval) {
        add(slot: slot(for: interval.name), startMs: interval.startMs, endMs: interval.endMs, elapsedMs: interval.elapsedMs)
    }

    /// Adds `interval` as `add(_:)` does, and to its device's totals (`ReportTotals.groups`).
    /// Devices are compared by their names' bytes, as names are.
    package mutating func add(byDevice interval: Interval) {
        add(interval, inGroup: interval.device)
    }

    /// Adds `interval` as `add(_:)` does, and to its cycle phase's totals (`ReportTotals.groups`,
    /// by label; one of no phase in the group labelled nil).
    package mutating func add(byPhase interval: Interval) {
        add(interval, inGroup: interval.phase)
    }

    private mutating func add(_ interval: Interval, inGroup label: String?) {
        let group: Int
        if let slot = label.map({ groupSlots[StopwatchKey($0)] }) ?? unlabelledSlot {
            group = slot
        } else {
            groups.append(label)
            group = groups.count - 1
            if let label { groupSlots[StopwatchKey(label)] = group } else { unlabelledSlot = group }
        }
        currentGroup = group
        defer { currentGroup = nil }
        add(interval)
    }

    /// Adds an interval of the name in `slot` (from `slot(for:)`): from `startMs` to `endMs`
    /// (nil: still counting, to `now`), `elapsedMs` counted.
    package mutating func add(slot key: Int, startMs start: Int64, endMs: Int64?, elapsedMs elapsed: Int64) {
        let end = max(endMs ?? now, start)
        let lower = max(start, since ?? start)
        let upper = min(end, until ?? end)
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
        guard upper - lower <= Self.longestSplit else {
            recordLongPart(key, Self.scaled(upper - start, elapsed, wall) - Self.scaled(lower - start, elapsed, wall), from: lower, to: upper)
            return
        }
        var from = lower
        while from < upper {
            // A day Glibc cannot compute ends the splitting: the rest counts on this day.
            let next = LocalTime.startOfDay(from, addingDays: 1).map { $0 > from ? min($0, upper) : upper } ?? upper
            daysWalked += 1
            let counted = Self.scaled(from - start, elapsed, wall)
            let share = Self.scaled(next - start, elapsed, wall) - counted
            if share > 0 {
                record(key, share, on: from)
            } else if next < upper {
                // Days with nothing counted on them (an interval whose span is far longer than
                // its time, as only a damaged one is) are skipped, not walked one by one: to
                // the day where the count next grows, if it does: the day of the instant before
                // `grows` (a day whose end is `grows` holds the growth; the next one does not).
                guard counted < elapsed else { return }
                let grows = start + Self.span(reaching: counted + 1, elapsed, wall)
                if grows > next {
                    from = max(next, LocalTime.startOfDay(min(grows, upper) - 1) ?? next)
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
        var counted: [Int: Int64] = [:]
        for (slot, total) in perName.enumerated() { if let total { counted[slot] = total } }
        let names = rows(counted)
        var days: [ReportTotals.Day] = []
        for (dayStart, names) in perDay.sorted(by: { $0.key < $1.key }) {
            let rows = rows(names)
            days.append(ReportTotals.Day(day: Self.dayText(dayStart), names: rows, total: Self.sum(rows)))
        }
        if let longParts {
            // Among the days, after the day it begins on.
            let rows = rows(longParts.names)
            let label = Self.dayText(longParts.first) + "/" + Self.dayText(longParts.last)
            let firstDay = LocalTime.startOfDay(longParts.first) ?? longParts.first
            let index = perDay.keys.filter { $0 <= firstDay }.count
            days.insert(ReportTotals.Day(day: label, names: rows, total: Self.sum(rows), spansDays: true), at: index)
        }
        var groupTotals: [ReportTotals.Group] = []
        for (group, names) in perGroup {
            let rows = rows(names)
            groupTotals.append(ReportTotals.Group(label: groups[group], names: rows, total: Self.sum(rows)))
        }
        // Longest first, then by label (bytes), the unlabelled last among equals.
        groupTotals.sort { lhs, rhs in
            guard lhs.total == rhs.total else { return lhs.total > rhs.total }
            guard let left = lhs.label else { return false }
            guard let right = rhs.label else { return true }
            return left.utf8.lexicographicallyPrecedes(right.utf8)
        }
        return ReportTotals(names: names, days: days, total: Self.sum(names), groups: groupTotals)
    }

    private static func dayText(_ instant: Int64) -> String {
        LocalTime.dateTime(instant)?.dayText ?? "\(instant)"
    }

    private mutating func record(_ key: Int, _ milliseconds: Int64, on instant: Int64) {
        perName[key] = Self.add(perName[key] ?? 0, milliseconds)
        if let currentGroup { Self.accumulate(&perGroup[currentGroup, default: [:]][key, default: 0], milliseconds) }
        guard byDay, let day = LocalTime.startOfDay(instant) else { return }
        Self.accumulate(&perDay[day, default: [:]][key, default: 0], milliseconds)
    }

    /// A part from `lower` to `upper` (not included) longer than `longestSplit`.
    private mutating func recordLongPart(_ key: Int, _ milliseconds: Int64, from lower: Int64, to upper: Int64) {
        // As a day's share: nothing counted, no row.
        guard milliseconds > 0 else { return }
        perName[key] = Self.add(perName[key] ?? 0, milliseconds)
        var parts = longParts ?? (lower, upper - 1, [:])
        parts.first = min(parts.first, lower)
        parts.last = max(parts.last, upper - 1)
        Self.accumulate(&parts.names[key, default: 0], milliseconds)
        longParts = parts
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

    /// `total` plus `milliseconds`, saturating, in place: a dictionary's entry is found once
    /// (`totals[key, default: 0]`), not once to read and again to write.
    private static func accumulate(_ total: inout Int64, _ milliseconds: Int64) {
        total = add(total, milliseconds)
    }

    private static func sum(_ rows: [ReportTotals.Row]) -> Int64 {
        rows.reduce(0) { add($0, $1.milliseconds) }
    }

    private func rows(_ totals: [Int: Int64]) -> [ReportTotals.Row] {
        totals.map { (key: keys[$0.key], value: $0.value) }.sorted { lhs, rhs in
            lhs.value != rhs.value ? lhs.value > rhs.value : lhs.key < rhs.key
        }
        .map { ReportTotals.Row(name: $0.key.name, milliseconds: $0.value) }
    }
}
