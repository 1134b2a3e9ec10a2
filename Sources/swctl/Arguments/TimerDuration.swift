import StopwatchProtocol

/// A countdown's length as `swctl timer` takes it: `DurationText`'s forms (`250ms`, `1s`,
/// `1.5s`, `2m`, `1h`), or several of them from the largest unit down (`1h30m`, `2m30s`),
/// within `CountdownTarget.range`.
package enum TimerDuration {
    /// The forms and the range, said once for the usage error and the help.
    package static let rule = "write it like 250ms, 1s, 1.5s, 2m, 1h or 1h30m, \(CountdownTarget.rule)"

    /// The duration in whole milliseconds (what the daemon takes), or nil when `text` is
    /// not a duration or out of range.
    package static func parse(_ text: String) -> Duration? {
        guard let total = sum(of: text) else { return nil }
        // The daemon counts whole milliseconds: `1.5ms` is 1 ms, `0.4ms` none (refused).
        return CountdownTarget.duration(milliseconds: total.milliseconds)
    }

    /// `text` cut where a unit ends and a number starts (`1h30m` → `1h`, `30m`), each part
    /// read by `DurationText`, the units strictly decreasing so that `30m1h` or `1m1m`, more
    /// likely typos than meant, are refused.
    private static func sum(of text: String) -> Duration? {
        var parts: [String] = []
        var part = ""
        for character in text {
            let startsNumber = character.isASCII && (character.isNumber || character == ".")
            if startsNumber, let last = part.last, last.isLetter {
                parts.append(part)
                part = ""
            }
            part.append(character)
        }
        if !part.isEmpty { parts.append(part) }
        guard !parts.isEmpty else { return nil }
        var total = Duration.zero
        var previousRank = Int.max
        for part in parts {
            guard let duration = DurationText.parse(part), let rank = unitRank(part), rank < previousRank else { return nil }
            previousRank = rank
            total += duration
        }
        return total
    }

    /// Larger units rank higher; `ms` is checked before `s`, which it ends with. `min` is
    /// `m` as systemd writes it (`DurationText` reads both).
    private static func unitRank(_ part: String) -> Int? {
        if part.hasSuffix("ms") { return 0 }
        if part.hasSuffix("s") { return 1 }
        if part.hasSuffix("m") || part.hasSuffix("min") { return 2 }
        if part.hasSuffix("h") { return 3 }
        return nil
    }
}
