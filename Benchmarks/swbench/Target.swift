/// When a figure is good enough: a bound on its value, or on its value against its baseline.
indirect enum Target {
    case atMost(Double)
    case atLeast(Double)
    case between(Double, Double)
    /// The value's magnitude at most this.
    case magnitudeAtMost(Double)
    /// At most this many times the baseline.
    case atMostTimesBaseline(Double)
    /// At least this fraction of the baseline.
    case atLeastFractionOfBaseline(Double)
    /// At most the baseline plus this.
    case atMostAboveBaseline(Double)
    case both(Target, Target)
    /// Nothing to meet: shown beside the figures that have a target (issue 30's unpinned
    /// round trip, CPU per Get).
    case reported

    /// Whether `value` meets it; a target on the baseline is not met without one.
    func isMet(value: Double, baseline: Double?) -> Bool {
        switch self {
        case .atMost(let bound): value <= bound
        case .atLeast(let bound): value >= bound
        case .between(let lower, let upper): lower <= value && value <= upper
        case .magnitudeAtMost(let bound): abs(value) <= bound
        case .atMostTimesBaseline(let factor): baseline.map { value <= factor * $0 } ?? false
        case .atLeastFractionOfBaseline(let fraction): baseline.map { value >= fraction * $0 } ?? false
        case .atMostAboveBaseline(let margin): baseline.map { value <= $0 + margin } ?? false
        case .reported: true
        case .both(let first, let second):
            first.isMet(value: value, baseline: baseline) && second.isMet(value: value, baseline: baseline)
        }
    }
}
