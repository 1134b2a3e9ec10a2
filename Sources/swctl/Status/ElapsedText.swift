/// Elapsed time as people read it: `H:MM:SS`, or `H:MM:SS.t` with tenths.
package enum ElapsedText {
    /// Hours are neither padded nor capped (`123:04:05`). Tenths are truncated, not rounded,
    /// so the text never runs ahead of the stopwatch. A negative input reads as zero.
    package static func string(milliseconds: Int64, tenths: Bool) -> String {
        let milliseconds = max(0, milliseconds)
        let totalSeconds = milliseconds / 1000
        let hours = totalSeconds / 3600
        let minutes = totalSeconds / 60 % 60
        let seconds = totalSeconds % 60
        var text = "\(hours):\(twoDigits(minutes)):\(twoDigits(seconds))"
        if tenths {
            text += ".\(milliseconds % 1000 / 100)"
        }
        return text
    }

    private static func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
