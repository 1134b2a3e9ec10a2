/// Why a `Watch` reply was sent (its `event`), and what a hook is run for.
public enum WatchEvent: String, Sendable, CaseIterable {
    /// The first reply of a watch: the stopwatch as it is.
    case current
    /// Counting on: only the elapsed time moved. The only event a slow watcher may miss
    /// (ticks merge into the newest).
    case tick
    /// Start, a Toggle that starts, Countdown, StartCycle or Restart.
    case start
    /// Stop, or a Toggle that stops.
    case stop
    case reset
    case lap
    /// SetTarget: it became a countdown, got another target, or became plain again.
    case target
    /// A counting countdown's elapsed time reached its target.
    case expired
    /// Removed: it reads as a stopwatch never started.
    case removed
    /// A cycle's next phase began: at the instant the last one expired (automatic), or at
    /// Next.
    case phase
    /// An expired countdown was snoozed: it counts on towards a later target.
    case snooze
}
