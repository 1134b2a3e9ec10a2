import StopwatchProtocol
import Varlink

/// Lookups for the checks of commands that write the past (`at_ms`, Track, Amend).
extension HistoryJournal {
    /// An ended interval of `name`, as corrections leave it, that overlaps
    /// [`startMs`, `endMs`), other than the one whose id is `excluding`; nil when none.
    /// Throws what a `History` call would fail with when the months cannot be read.
    ///
    /// PLACEHOLDER until the journal's format 2 lands (issue Amend): finds nothing.
    func overlapping(name: String, startMs: Int64, endMs: Int64, excluding id: String? = nil) throws(VarlinkError) -> Interval? {
        nil
    }
}
