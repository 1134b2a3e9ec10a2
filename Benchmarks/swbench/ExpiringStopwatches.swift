import StopwatchProtocol
import Varlink

/// What the `expiry` and `phase` groups set going on a daemon, each watched, and time:
/// countdowns, by their `expired` reply; or automatic cycles, by the `phase` reply their
/// first phase's end sends (the daemon tells the expiry, appends the phase's interval to the
/// history and tells the next phase, all at that instant). Stopwatch `i` ends its countdown
/// or first phase `lead + i·spacing` after it is set.
enum ExpiringStopwatches {
    case countdowns
    case cycles

    /// How long a cycle's second phase lasts: nothing else happens to it during a run.
    static let secondPhase: Duration = .seconds(3_600)

    /// The group's subdirectory, and the word its progress lines use.
    var group: String {
        switch self {
        case .countdowns: "expiry"
        case .cycles: "phase"
        }
    }

    /// What they are, plural: the progress line's and the JSON details' word.
    var noun: String {
        switch self {
        case .countdowns: "countdowns"
        case .cycles: "cycles"
        }
    }

    /// Whether the timed reply waits for an append to the history: a phase's interval ends
    /// at the change, and is on disk before the change is told.
    var appendsToHistory: Bool { self == .cycles }

    var figure: FigureKind {
        switch self {
        case .countdowns: .expiryDelay
        case .cycles: .phaseDelay
        }
    }

    /// The reply whose receipt is timed.
    var event: WatchEvent {
        switch self {
        case .countdowns: .expired
        case .cycles: .phase
        }
    }

    func count(in plan: BenchPlan) -> Int {
        switch self {
        case .countdowns: plan.countdowns
        case .cycles: plan.cycles
        }
    }

    func lead(in plan: BenchPlan) -> Duration {
        switch self {
        case .countdowns: plan.countdownLead
        case .cycles: plan.cycleLead
        }
    }

    func spacing(in plan: BenchPlan) -> Duration {
        switch self {
        case .countdowns: plan.countdownSpacing
        case .cycles: plan.cycleSpacing
        }
    }

    func name(_ index: Int) -> String {
        switch self {
        case .countdowns: "countdown\(index)"
        case .cycles: "cycle\(index)"
        }
    }

    /// The call that sets stopwatch `index` going, ending its countdown or first phase
    /// `target` after.
    func call(_ index: Int, target: Duration) -> VarlinkCall {
        switch self {
        case .countdowns:
            var call = VarlinkCall.stopwatchd("Countdown", name: name(index))
            call.parameters["target_ms"] = .int(target.milliseconds)
            return call
        case .cycles:
            var call = VarlinkCall.stopwatchd("StartCycle", name: name(index))
            call.parameters["phases"] = .array(phases(target: target).map { phase in
                .object(["label": .string(phase.label), "target_ms": .int(phase.targetMs)])
            })
            call.parameters["auto"] = .bool(true)
            return call
        }
    }

    /// The raw baseline's reply for stopwatch `index`, in the daemon's format: the one its
    /// watcher receives at the instant.
    func update(_ index: Int, target: Duration) -> WatchUpdate {
        switch self {
        case .countdowns:
            WatchUpdate(stopwatch: Stopwatch(name: name(index), state: .counting, elapsedMs: 0, targetMs: 0), event: .expired)
        case .cycles:
            WatchUpdate(
                stopwatch: Stopwatch(
                    name: name(index), state: .counting, elapsedMs: 0, targetMs: Self.secondPhase.milliseconds,
                    cycle: Stopwatch.Cycle(phases: phases(target: target), phase: 1)
                ),
                event: .phase
            )
        }
    }

    private func phases(target: Duration) -> [Stopwatch.Phase] {
        [Stopwatch.Phase(label: "focus", targetMs: target.milliseconds), Stopwatch.Phase(label: "break", targetMs: Self.secondPhase.milliseconds)]
    }
}
