import StopwatchProtocol

/// Tells from a watch's updates whether the daemon ticks faster than once a second, so that
/// elapsed times need tenths (whole seconds would hide most updates).
///
/// The sign is two gaps in a row under 0.9 s between counting updates with the same laps.
/// One is not enough: the first reply of a watch, or the update of a lap, comes mid-second,
/// so the gap to the next tick is short whatever the tick. (Under 0.9 s and not 1 s: with a
/// 1 s tick, a late delivery then an on-time one are a little under a second apart.)
package struct TickRateDetector: Sendable {
    /// Once true, stays true: the width of a status bar's text should not flicker.
    package private(set) var showsTenths: Bool
    private var previous: Stopwatch?
    private var shortGapsInARow = 0

    package init(showsTenths: Bool = false) {
        self.showsTenths = showsTenths
    }

    package mutating func observe(_ stopwatch: Stopwatch) {
        defer { previous = stopwatch }
        guard !showsTenths, let previous, previous.state == .counting, stopwatch.state == .counting,
            previous.lapsMs == stopwatch.lapsMs
        else {
            shortGapsInARow = 0
            return
        }
        // What a daemon sends is not trusted to be sane: a difference that overflows is no gap.
        let (gap, overflow) = stopwatch.elapsedMs.subtractingReportingOverflow(previous.elapsedMs)
        shortGapsInARow = !overflow && gap > 0 && gap < 900 ? shortGapsInARow + 1 : 0
        if shortGapsInARow >= 2 { showsTenths = true }
    }

    /// A new stream (after reconnecting) has no previous update to compare with.
    package mutating func streamRestarted() {
        previous = nil
        shortGapsInARow = 0
    }
}
