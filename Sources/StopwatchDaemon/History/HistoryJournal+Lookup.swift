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
}
