/// Measurements of one kind, for their median and high percentiles.
struct Samples {
    private(set) var values: [Double] = []
    private var isSorted = true

    init(_ values: [Double] = []) {
        self.values = values
        isSorted = false
    }

    var count: Int { values.count }
    var isEmpty: Bool { values.isEmpty }

    mutating func append(_ value: Double) {
        values.append(value)
        isSorted = false
    }

    mutating func append(contentsOf other: Samples) {
        values += other.values
        isSorted = false
    }

    /// The nearest-rank percentile `p` (0–100): the smallest value with at least p % of the
    /// samples at or below it. Nil when there are no samples.
    mutating func percentile(_ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        if !isSorted {
            values.sort()
            isSorted = true
        }
        let rank = Int((p / 100 * Double(values.count)).rounded(.up))
        return values[min(max(rank, 1), values.count) - 1]
    }

    mutating func median() -> Double? { percentile(50) }
    mutating func p99() -> Double? { percentile(99) }

    var minimum: Double? { values.min() }
    var maximum: Double? { values.max() }
}
