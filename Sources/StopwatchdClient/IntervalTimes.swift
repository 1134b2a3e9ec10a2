/// One interval as a reader that adds up time (`swctl report`) needs it: its times, and its
/// name as a number in the stream's `NameTable`. No strings: a report over a million
/// intervals made, copied and released four strings per interval for nothing.
package struct IntervalTimes: Equatable, Sendable {
    /// The name's number in the `NameTable` of the stream that read it.
    package var nameNumber: Int32
    package var startMs: Int64
    /// Nil while the interval is still counting.
    package var endMs: Int64?
    package var elapsedMs: Int64

    package init(nameNumber: Int32, startMs: Int64, endMs: Int64?, elapsedMs: Int64) {
        self.nameNumber = nameNumber
        self.startMs = startMs
        self.endMs = endMs
        self.elapsedMs = elapsedMs
    }
}
