import StopwatchProtocol

/// The decisions of `swctl wait`, apart from its I/O: updates in, and for each either
/// "go on" (nil) or how the wait ends. The `--timeout` and the reconnections are the
/// caller's (`Waiter`); this only sees the updates of one connection after another, each
/// starting with its `current`.
package struct WaitMachine: Sendable {
    /// What is waited for; nil until the first state decides the default (SPEC §5):
    /// `expired` for a countdown, `change` otherwise. Decided once, so a `timer --off`
    /// meanwhile does not turn a wait for the expiry into a wait for anything.
    package private(set) var condition: WaitCondition?
    /// The last state seen, to compare a reconnection's `current` with.
    private var last: Stopwatch?

    package init(condition: WaitCondition?) {
        self.condition = condition
    }

    package mutating func observe(_ update: WatchUpdate) -> WaitOutcome? {
        let stopwatch = update.stopwatch
        let previous = last
        last = stopwatch
        let condition = self.condition ?? (stopwatch.targetMs != nil ? .expired : .change)
        self.condition = condition
        if update.event == .removed { return .removed }
        // A `current` after the first is a reconnection: what happened while we were away
        // shows only in how the state differs. One that reads as never started was removed.
        let reconnected = update.event == .current && previous != nil
        if reconnected, let previous, stopwatch.isBlank, !previous.isBlank { return .removed }
        switch condition {
        case .expired:
            return update.event == .expired || stopwatch.hasReachedTarget ? .happened : nil
        case .stop:
            return stopwatch.state != .counting ? .happened : nil
        case .change:
            switch update.event {
            case .tick: return nil
            case .current:
                guard reconnected, let previous else { return nil }
                return Self.changed(from: previous, to: stopwatch) ? .happened : nil
            default: return .happened
            }
        }
    }

    /// Whether `now` differs from `before` by more than counting on: a command, or an
    /// expiry, in between.
    private static func changed(from before: Stopwatch, to now: Stopwatch) -> Bool {
        if before.state != now.state || before.lapsMs != now.lapsMs || before.targetMs != now.targetMs { return true }
        if now.hasReachedTarget && !before.hasReachedTarget { return true }
        // Not counting, the time stands still; counting, it only moves on.
        return now.state == .counting ? now.elapsedMs < before.elapsedMs : now.elapsedMs != before.elapsedMs
    }
}
