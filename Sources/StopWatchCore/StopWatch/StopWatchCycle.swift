/// A sequence of countdowns a stopwatch runs one after another (a pomodoro is one: focus and
/// breaks), `rounds` times or without end, and where in it the stopwatch is.
///
/// Only the plan and the position: each phase's time is the stopwatch's own (its origin and
/// target), derived from the clock like any countdown's. The next phase of an automatic
/// cycle begins at the instant the last one expires (`StopWatchCommand.advance`), never when
/// its expiry was noticed.
public struct StopWatchCycle: Equatable, Sendable {
    /// One phase: a countdown of `target`, named `label` (in the history, `Interval.phase`).
    public struct Phase: Equatable, Sendable {
        public var label: String
        public var target: Duration

        public init(label: String, target: Duration) {
            self.label = label
            self.target = target
        }
    }

    /// The phases, in order; never empty.
    public let phases: [Phase]
    /// How many times the phases run; nil: without end.
    public let rounds: Int?
    /// true: each phase begins when the one before expires; false: at `next`, the phase
    /// before running on in overtime meanwhile.
    public let auto: Bool
    /// The phase running now, 0-based: always an index of `phases`.
    public private(set) var phase: Int
    /// The round running now, 1-based: at most `rounds`, when it has an end.
    public private(set) var round: Int

    /// A cycle at `phase` (clamped into `phases`) of `round` (clamped into 1…`rounds`); nil
    /// for no phases or a number of rounds below one. What a state file says is read
    /// through this, so nothing in one can make a position that does not exist.
    public init?(phases: [Phase], rounds: Int?, auto: Bool, phase: Int = 0, round: Int = 1) {
        guard !phases.isEmpty, rounds.map({ $0 >= 1 }) ?? true else { return nil }
        self.phases = phases
        self.rounds = rounds
        self.auto = auto
        self.phase = min(max(phase, 0), phases.count - 1)
        self.round = min(max(round, 1), rounds ?? Int.max)
    }

    /// The phase running now.
    public var current: Phase { phases[phase] }

    /// Whether this is the last phase of the last round: nothing follows it.
    public var isLast: Bool {
        guard let rounds else { return false }
        return round >= rounds && phase == phases.count - 1
    }

    /// The cycle at the phase after this one (the first of the next round after the last of
    /// a round); nil after the last phase of the last round.
    public var next: StopWatchCycle? {
        guard !isLast else { return nil }
        var next = self
        if phase + 1 < phases.count {
            next.phase += 1
        } else {
            // Checked: a cycle without end at Int.max rounds stays in its last round.
            next.phase = 0
            next.round = round == Int.max ? round : round + 1
        }
        return next
    }

    /// The same plan from its first phase of round 1.
    public var fromTheStart: StopWatchCycle {
        var first = self
        first.phase = 0
        first.round = 1
        return first
    }

    /// Whether `other` stands at the same phase of the same round.
    public func isAtSamePosition(as other: StopWatchCycle) -> Bool {
        phase == other.phase && round == other.round
    }
}

/// A countdown's snoozes since it last began anew: how many, and the target it had before
/// the first (which `restart` runs again).
public struct StopWatchSnooze: Equatable, Sendable {
    public var count: Int
    public var originalTarget: Duration

    public init(count: Int, originalTarget: Duration) {
        self.count = count
        self.originalTarget = originalTarget
    }
}
