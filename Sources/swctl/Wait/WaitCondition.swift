/// What `swctl wait` waits for (`--for`). Each is a state as much as an event, so that a
/// wait started after the fact, or reconnected after a daemon restart, still ends.
package enum WaitCondition: String, CaseIterable, Sendable {
    /// The countdown has reached its target: an `expired` event, or any state with elapsed ≥
    /// target (already expired, maybe while the daemon was down, or paused in overtime).
    case expired
    /// It is not counting: a `stop` event, or a state that is stopped or paused.
    case stop
    /// Any event but `tick` and `current`; after a reconnection, a state that differs
    /// from the last one seen in more than the time counted.
    case change
}
