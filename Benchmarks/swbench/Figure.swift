import Varlink

/// One measured figure next to its baseline, or why it could not be measured.
struct Figure {
    let kind: FigureKind
    let value: Double?
    let baseline: Double?
    /// The raw counts behind the value, for the JSON report.
    var details: JSONObject
    /// A second baseline the table shows beside the first (`/bin/true 0.49`), in its unit.
    var baselineAside: String?
    /// Why there is no value.
    let failure: String?
    /// False when a condition of the target that the value cannot show failed (a tick
    /// before its boundary, where the value is a high percentile).
    let otherConditionsMet: Bool

    init(_ kind: FigureKind, value: Double, baseline: Double? = nil, details: JSONObject = [:], otherConditionsMet: Bool = true) {
        self.kind = kind
        self.value = value
        self.baseline = baseline
        self.details = details
        self.failure = nil
        self.otherConditionsMet = otherConditionsMet
    }

    init(_ kind: FigureKind, failure: String) {
        self.kind = kind
        self.value = nil
        self.baseline = nil
        self.details = [:]
        self.failure = failure
        self.otherConditionsMet = false
    }

    var ratio: Double? {
        guard let value, let baseline, baseline != 0 else { return nil }
        return value / baseline
    }

    /// Whether the figure has a target at all (not one only reported beside the others).
    var isJudged: Bool {
        if case .reported = kind.target { return false }
        return true
    }

    var isMet: Bool {
        guard let value, otherConditionsMet else { return false }
        return kind.target.isMet(value: value, baseline: baseline)
    }
}
