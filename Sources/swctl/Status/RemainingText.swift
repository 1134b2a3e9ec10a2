import StopwatchProtocol

/// A countdown's remaining time as people read it: `0:03:59` counting down to `0:00:00`,
/// then the overtime as `+0:00:12`.
package enum RemainingText {
    /// Nil for a plain stopwatch. The time left is rounded up to the unit shown (seconds, or
    /// tenths), so `0:00:00` shows only once the target is reached, as a kitchen timer does;
    /// the overtime is rounded down, as elapsed time is. Checked arithmetic: both numbers
    /// come from the daemon.
    package static func string(for stopwatch: Stopwatch, tenths: Bool) -> String? {
        guard let targetMs = stopwatch.targetMs else { return nil }
        let elapsedMs = stopwatch.elapsedMs
        guard elapsedMs <= targetMs else {
            let (overtime, overflow) = elapsedMs.subtractingReportingOverflow(targetMs)
            return "+" + ElapsedText.string(milliseconds: overflow ? .max : overtime, tenths: tenths)
        }
        let (remaining, overflow) = targetMs.subtractingReportingOverflow(elapsedMs)
        return ElapsedText.string(milliseconds: overflow ? .max : roundedUp(remaining, tenths: tenths), tenths: tenths)
    }

    /// `milliseconds` (not negative) rounded up to the unit shown; `.max` past it.
    private static func roundedUp(_ milliseconds: Int64, tenths: Bool) -> Int64 {
        let unit: Int64 = tenths ? 100 : 1000
        let units = milliseconds / unit + (milliseconds % unit == 0 ? 0 : 1)
        let (rounded, overflow) = units.multipliedReportingOverflow(by: unit)
        return overflow ? .max : rounded
    }

    /// Whether `stopwatch` needs tenths whatever the tick: a countdown of a fraction of a
    /// second (`timer 1.5s`, `timer 200ms`), which whole seconds would show as
    /// `0:00:01 left of 0:00:00`.
    package static func needsTenths(_ stopwatch: Stopwatch) -> Bool {
        guard let targetMs = stopwatch.targetMs else { return false }
        return targetMs % 1000 != 0
    }

    /// The target as a time (`0:04:00`); nil for a plain stopwatch. Rounded up as the time
    /// left is, so that a countdown starts at its target (`0:00:00.1 left of 0:00:00.1` for
    /// `timer 50ms`, not `… of 0:00:00.0`) and is never shown a target of zero.
    package static func target(of stopwatch: Stopwatch, tenths: Bool) -> String? {
        stopwatch.targetMs.map { ElapsedText.string(milliseconds: roundedUp(max($0, 0), tenths: tenths), tenths: tenths) }
    }
}
