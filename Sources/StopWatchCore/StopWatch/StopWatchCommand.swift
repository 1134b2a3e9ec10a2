/// What a stopwatch can be told to do. See `StopWatchSnapshot.applying(_:at:)` for the
/// transition table.
public enum StopWatchCommand: Command, Equatable {
    public typealias State = StopWatchSnapshot

    /// Starts counting from zero, or resumes a paused stopwatch.
    case start
    /// Pauses a counting stopwatch.
    case stop
    /// `start` when not counting, `stop` when counting.
    case toggle
    /// `start`, `stop` or `toggle` as if it had come `ago` earlier (zero: now), and for one
    /// that starts counting, the note of the counting interval it begins. `.start` is
    /// `.transition(.start, ago: .zero, note: nil)`.
    case transition(Transition, ago: Duration, note: String?)
    /// Back to zero, laps cleared; refused while counting. A countdown keeps its target.
    case reset
    /// Records a split time; only while counting.
    case lap
    /// Makes it a countdown of `target`, or a plain stopwatch with nil, in any state and
    /// without changing its state, elapsed time or laps.
    case setTarget(Duration?)
    /// From any state: back to zero, laps cleared, a countdown of `target` counting at once.
    case countdown(Duration)
    /// Records that a countdown reached its target, if its time has come
    /// (`StopWatchSnapshot.expiry`); changes nothing otherwise. Sent by whatever keeps the
    /// countdowns' time: in the daemon, one timer on each clock for all of them.
    case expire
    /// Counts time in suspend (true: the boot clock) or only time awake (false: the awake
    /// clock) from now on; what was counted so far stays.
    case setCountsSleep(Bool)
    /// From any state: runs `cycle`'s phases from its first, of round 1, counting at once
    /// (back to zero, laps cleared, as `countdown`).
    case startCycle(StopWatchCycle)
    /// A cycle: ends the current phase now and counts the next from zero, from any state;
    /// refused for a stopwatch without a cycle, or in its last phase of its last round.
    case next
    /// The automatic phase change: an automatic cycle whose phase expired counts the next
    /// phase from the instant it expired (not from now). Changes nothing otherwise, nor
    /// after the last phase of the last round, where it stays expired. Sent by whatever
    /// keeps the countdowns' time, after `expire`.
    case advance
    /// A countdown (or a cycle's phase) that expired and counts on: its target becomes the
    /// elapsed time plus `by`, so it expires again, once, `by` from now. Refused otherwise.
    case snooze(by: Duration)
    /// The same countdown from zero, counting now (its target from before any snooze), or a
    /// cycle from its first phase of round 1; refused for a plain stopwatch.
    case restart

    /// The transitions that may be dated in the past.
    public enum Transition: Equatable, Sendable {
        case start, stop, toggle
    }
}
