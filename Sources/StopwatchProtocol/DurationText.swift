/// Durations as options write them: a number and a unit, `250ms`, `1s`, `1.5s`, `2m`, `1h`;
/// `min` reads as `m` too, since systemd writes minutes so (`--exit-idle 5min` in a unit).
package enum DurationText {
    package static func parse(_ text: String) -> Duration? {
        let units: [(suffix: String, nanoseconds: Double)] = [
            ("ms", 1e6), ("s", 1e9), ("min", 60e9), ("m", 60e9), ("h", 3600e9),
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
