/// What `swctl timer` asks of the daemon.
package enum TimerAction: Equatable, Sendable {
    /// `timer [NAME] DURATION`: `Countdown`, a new countdown from zero, whatever the
    /// stopwatch was doing.
    case countdown(Duration)
    /// `timer [NAME] DURATION --keep`: `SetTarget`, the count goes on with this target (a
    /// reminder on a running stopwatch).
    case keepCounting(Duration)
    /// `timer [NAME] --off`: `SetTarget` null, a plain stopwatch again.
    case off
}
