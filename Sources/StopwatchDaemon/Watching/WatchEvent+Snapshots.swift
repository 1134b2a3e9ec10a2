import StopWatchCore
import StopwatchProtocol

extension WatchEvent {
    /// What turned `previous` into `next`, two states of one stopwatch published in a row
    /// (distinct: the store publishes no repeats). The same for its watchers and its hooks,
    /// whoever asks. Removal is not a transition of the use case: the registry says it.
    init(from previous: StopWatchSnapshot, to next: StopWatchSnapshot) {
        let switchedClocks = next.countsSleep != previous.countsSleep
        let startedAnew = next.state.isCounting && (!previous.state.isCounting || (!switchedClocks && next.origin != previous.origin))
        // A cycle that moved to another phase, not back to its first of round 1 (a start
        // anew: StartCycle, Restart; Reset stops it): the next phase began.
        let movedPhase = previous.cycle != nil && next.cycle.map { cycle in
            !(previous.cycle.map(cycle.isAtSamePosition(as:)) ?? false) && (cycle.phase != 0 || cycle.round != 1)
        } == true
        let snoozed = (next.snooze?.count ?? 0) > (previous.snooze?.count ?? 0)
        self = if switchedClocks {
            // SetCountsSleep: its origin moved onto the other clock, nothing counted changed.
            // Told, since the reply changed (`counts_sleep`) and a watcher never misses a
            // change; as `target`, the event of the other setting that changes no state
            // (a new event name would break clients that know the fixed list).
            .target
        } else if movedPhase && next.state.isCounting {
            .phase
        } else if snoozed {
            .snooze
        } else if startedAnew {
            // A start, a resume, a Toggle that starts, or a Countdown (from any state).
            .start
        } else if previous.state.isCounting && !next.state.isCounting {
            .stop
        } else if case .stopped = next.state, previous.state != .stopped {
            // A reset also makes an expired countdown able to expire again.
            .reset
        } else if next.hasExpired && !previous.hasExpired {
            .expired
        } else if next.target != previous.target || next.hasExpired != previous.hasExpired
            || (previous.cycle != nil && next.cycle == nil) || (previous.snooze != nil && next.snooze == nil)
        {
            // SetTarget (a cycle or a snooze ended, even with the same target).
            .target
        } else if next.laps != previous.laps {
            .lap
        } else {
            // Counting on from the same origin, the same laps and target: only time moved.
            .tick
        }
    }
}
