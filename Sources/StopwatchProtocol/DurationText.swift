/// Durations as options write them: a number and a unit, `250ms`, `1s`, `1.5s`, `2m`, `1h`,
/// `2d`, or several of them from the largest unit down (`1h30m`, `1d12h`, SPEC §5); `min`
/// reads as `m` too, since systemd writes minutes so (`--exit-idle 5min` in a unit).
package enum DurationText {
    /// The forms, as a usage error or a help lists them.
    package static let forms = "250ms, 1s, 1.5s, 2m, 1h, 1h30m, 2d or 1d12h"

    /// `text` as a duration: one number and unit, or several (`1h30m`), the units strictly
    /// decreasing so that `30m1h` or `1m1m`, more likely typos than meant, are refused.
    package static func parse(_ text: String) -> Duration? {
        guard let parts = split(text) else { return parsePart(text) }
        var total = Duration.zero
        var previousRank = Int.max
        for part in parts {
            guard let duration = parsePart(part), let rank = unitRank(part), rank < previousRank else { return nil }
            previousRank = rank
            total += duration
        }
        return total
    }

    /// `text` cut where a unit ends and a number starts (`1h30m` → `1h`, `30m`); nil when it
    /// is one part.
    private static func split(_ text: String) -> [String]? {
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
        return parts.count > 1 ? parts : nil
    }

    /// Larger units rank higher; `ms` is checked before `s`, which it ends with. `min` is
    /// `m` as systemd writes it.
    private static func unitRank(_ part: String) -> Int? {
        if part.hasSuffix("ms") { return 0 }
        if part.hasSuffix("s") { return 1 }
        if part.hasSuffix("m") || part.hasSuffix("min") { return 2 }
        if part.hasSuffix("h") { return 3 }
        if part.hasSuffix("d") { return 4 }
        return nil
    }

    /// One number and its unit.
    private static func parsePart(_ text: String) -> Duration? {
        let units: [(suffix: String, nanoseconds: Double)] = [
            ("ms", 1e6), ("s", 1e9), ("min", 60e9), ("m", 60e9), ("h", 3600e9), ("d", 86_400e9),
        ]
        for unit in units where text.hasSuffix(unit.suffix) {
            let number = text.dropLast(unit.suffix.count)
            // Digits with at most one dot: no signs, exponents, "inf" or "nan".
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                number.filter({ $0 == "." }).count <= 1, number != ".",
                let value = Double(number)
            else { return nil }
            let nanoseconds = value * unit.nanoseconds
            guard nanoseconds < 1e18 else { return nil }
            return .nanoseconds(Int64(nanoseconds.rounded()))
        }
        return nil
    }

    /// The shortest way to write `duration` that `parse` reads back.
    package static func string(_ duration: Duration) -> String {
        let milliseconds = duration.milliseconds
        if milliseconds % 1000 != 0 { return "\(milliseconds)ms" }
        let seconds = milliseconds / 1000
        if seconds % 60 != 0 || seconds == 0 { return "\(seconds)s" }
        let minutes = seconds / 60
        if minutes % 60 != 0 { return "\(minutes)m" }
        return "\(minutes / 60)h"
    }
}
