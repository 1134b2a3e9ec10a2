import StopwatchProtocol

/// A countdown's length as `swctl timer` takes it: `DurationText`'s forms (`250ms`, `1.5s`,
/// `2m`, `1h30m`, `2d`, `1d12h`), within `CountdownTarget.range`.
package enum TimerDuration {
    /// The forms and the range, said once for the usage error and the help.
    package static let rule = "write it like \(DurationText.forms), \(CountdownTarget.rule)"

    /// The duration in whole milliseconds (what the daemon takes), or nil when `text` is
    /// not a duration or out of range.
    package static func parse(_ text: String) -> Duration? {
        guard let total = DurationText.parse(text) else { return nil }
        // The daemon counts whole milliseconds: `1.5ms` is 1 ms, `0.4ms` none (refused).
        return CountdownTarget.duration(milliseconds: total.milliseconds)
    }
}
