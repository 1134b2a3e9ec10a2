/// A horizontal bar of Unicode blocks, drawn to an eighth of a cell.
package enum Bar {
    private static let eighths: [Character] = ["▏", "▎", "▍", "▌", "▋", "▊", "▉"]

    /// `value` out of `maximum` as at most `width` cells, rounded to the nearest eighth; a
    /// value above zero shows at least an eighth, so nothing counted looks like nothing.
    package static func string(_ value: Int64, of maximum: Int64, width: Int = 20) -> String {
        guard maximum > 0, value > 0, width > 0 else { return "" }
        let value = min(value, maximum)
        let cells = Int64(width) * 8
        // Exact in Int64 for any realistic time; a Double beyond that is precise enough.
        let (product, overflow) = value.multipliedReportingOverflow(by: cells)
        let total = overflow
            ? Int64((Double(value) / Double(maximum) * Double(cells)).rounded())
            : (product + maximum / 2) / maximum
        let parts = max(1, total)
        let full = Int(parts / 8)
        let rest = Int(parts % 8)
        return String(repeating: "█", count: full) + (rest > 0 ? String(eighths[rest - 1]) : "")
    }
}
