import StopwatchProtocol
import Varlink

/// Lookups for the checks of commands that write the past (`at_ms`, Track, Amend).
extension HistoryJournal {
    /// An ended interval of `name`, as corrections leave it, that overlaps
    /// [`startMs`, `endMs`), other than the one whose id is `excluding`; nil when none.
    /// Throws what a `History` call would fail with when the months cannot be read.
    ///
    /// Reads only the months that can hold one: an interval that overlaps ends after
    /// `startMs`, so in `startMs`'s month or later, and a later month is passed over when
    /// its earliest start (once known) is at or after `endMs`. Interval lines of another
    /// name are passed over by the name's bytes before they are parsed whole.
    func overlapping(name: String, startMs: Int64, endMs: Int64, excluding id: String? = nil) throws(VarlinkError) -> Interval? {
        let index = try correctionIndex()
        let query = HistoryQuery(name: name, since: startMs, until: endMs)
        func overlaps(_ interval: Interval) -> Bool {
            guard interval.id != id, let end = interval.endMs, HistoryQuery.sameName(interval.name, name) else { return false }
            return interval.startMs < endMs && startMs < end
        }
        for interval in index.correctedIntervals where overlaps(interval) { return interval }
        for interval in unwritten where !index.corrects(interval.id) && overlaps(interval) { return interval }
        var found: Interval?
        for (month, size) in try monthsToRead() where found == nil {
            guard query.mayMatch(month, earliestStart: earliestStart(of: month)) else { continue }
            try forEachLine(of: month, size: size) { line in
                guard found == nil, !HistoryLine.isCorrection(line) else { return }
                if let times = HistoryLine.plainStartAndEnd(line), times.end <= startMs || times.start >= endMs { return }
                guard let interval = HistoryLine.parse(line), !index.corrects(interval.id), overlaps(interval) else { return }
                found = interval
            }
        }
        return found
    }

    /// The ids of this device's ended intervals of the names `names` that end at or after
    /// `sinceMs`, as written (corrections aside): what a restart needs to know of the phases
    /// whose ends reached the history before a crash. One pass over the months from
    /// `sinceMs`'s; empty when they cannot be read (appended again, never lost).
    func endedIntervalIDs(names: Set<StopwatchKey>, sinceMs: Int64) -> Set<String> {
        guard !names.isEmpty, let months = try? monthsToRead() else { return [] }
        let first = HistoryMonth(epochMilliseconds: sinceMs)
        var ids: Set<String> = []
        for interval in unwritten where names.contains(StopwatchKey(interval.name)) { ids.insert(interval.id) }
        for (month, size) in months where month >= first {
            _ = try? forEachLine(of: month, size: size) { line in
                guard !HistoryLine.isCorrection(line) else { return }
                if let times = HistoryLine.plainStartAndEnd(line), times.end < sinceMs { return }
                guard let interval = HistoryLine.parse(line), let end = interval.endMs, end >= sinceMs,
                    names.contains(StopwatchKey(interval.name))
                else { return }
                ids.insert(interval.id)
            }
        }
        return ids
    }
}
