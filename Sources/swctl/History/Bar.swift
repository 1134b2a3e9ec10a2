/// A horizontal bar of Unicode blocks, drawn to an eighth of a cell.
package enum Bar {
    private static let eighths: [Character] = ["▏", "▎", "▍", "▌", "▋", "▊", "▉"]

    /// `value` out of `maximum` as at most `width` cells, rounded to the nearest eighth; a
    /// value above zero shows at least an eighth, so nothing counted looks like nothing.
    package static func string(_ value: Int64, of maximum: Int64, width: Int = 20) -> String {
        guard maximum > 0, value > 0, width > 0 else { return "" }
        let value = min(value, maximum)
        let cells = Int64(width) * 8
        // value × cells / maximum, rounded half up, in 128 bits: exact for any value a daemon
        // may send, and at most `cells` (value ≤ maximum), so it fits.
        let (quotient, remainder) = maximum.dividingFullWidth(value.multipliedFullWidth(by: cells))
        let total = quotient + (remainder >= maximum - remainder ? 1 : 0)
        let parts = max(1, total)
        let full = Int(parts / 8)
        let rest = Int(parts % 8)
        return String(repeating: "█", count: full) + (rest > 0 ? String(eighths[rest - 1]) : "")
    }
}
