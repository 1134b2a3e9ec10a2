/// What a cycle may be (SPEC §3), checked by the daemon and said by `swctl` from the same
/// numbers, so that the check and the message cannot drift apart.
package enum CyclePlan {
    /// Phases in one cycle.
    package static let phaseCount: ClosedRange<Int> = 1...16
    /// Rounds, when the cycle has an end.
    package static let roundCount: ClosedRange<Int> = 1...1_000
    /// A label's length in Unicode scalars; otherwise a label is as a name is.
    package static let maximumLabelLength = 32
    /// How far a snooze may move an expired countdown's end.
    package static let snooze: ClosedRange<Duration> = .seconds(1) ... .seconds(86_400)
    /// Snooze's length when none is given (`swctl snooze`, the notification's action).
    package static let defaultSnooze: Duration = .seconds(300)

    package static let phaseRule = "from \(phaseCount.lowerBound) to \(phaseCount.upperBound) phases"
    package static let roundRule = "from \(roundCount.lowerBound) to \(roundCount.upperBound) rounds"
    package static let labelRule = "1 to \(maximumLabelLength) characters, no control characters or '/', not '.' or '..', no space at either end"
    package static let snoozeRule = "from 1s to 24h"

    /// Whether `label` may name a phase: a valid name of at most 32 scalars.
    package static func isValidLabel(_ label: String) -> Bool {
        StopwatchName.isValid(label) && label.unicodeScalars.count <= maximumLabelLength
    }

    /// The label of phase `index` (0-based) when none is given: "1", "2", …
    package static func defaultLabel(_ index: Int) -> String { String(index + 1) }

    /// The pomodoro (`swctl pomodoro`): four times 25 minutes of focus and a break, 5
    /// minutes each but the last, 15.
    package static let pomodoro: [(label: String, target: Duration)] = [
        ("focus", .seconds(1500)), ("break", .seconds(300)), ("focus", .seconds(1500)), ("break", .seconds(300)),
        ("focus", .seconds(1500)), ("break", .seconds(300)), ("focus", .seconds(1500)), ("long-break", .seconds(900)),
    ]
}
