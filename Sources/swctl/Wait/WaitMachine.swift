import StopwatchProtocol

/// The decisions of `swctl wait`, apart from its I/O: updates in, and for each either
/// "go on" (nil) or a step: how the wait ends, or a question for the daemon first. The
/// `--timeout` and the reconnections are the caller's (`Waiter`); this only sees the updates
/// of one connection after another, each starting with its `current`, and the answers to
/// its questions.
package struct WaitMachine: Sendable {
    /// What is waited for; nil until the first state decides the default (SPEC §5): "until
    /// it is done", `phase` for a cycle, `expired` for a countdown, `stop` otherwise. Decided once, so a `timer
    /// --off` meanwhile does not turn a wait for the expiry into a wait for a stop.
    package private(set) var condition: WaitCondition?
    /// The last state seen, to compare a reconnection's `current` with.
    private var last: Stopwatch?
    /// A `current` that reads as never started, while `checkListed` is asked (the first one
    /// of a wait for a stop, or a reconnection's): it becomes `last` only with the answer, so
    /// a reconnection before one compares with the state before it again, and asks again.
    private var unanswered: Stopwatch?

    package init(condition: WaitCondition?) {
        self.condition = condition
    }

    package mutating func observe(_ update: WatchUpdate) -> WaitStep? {
        let stopwatch = update.stopwatch
        let previous = last
        unanswered = nil
        let condition = self.condition ?? (stopwatch.cycle != nil ? .phase : stopwatch.targetMs != nil ? .expired : .stop)
        self.condition = condition
        if update.event == .removed {
            last = stopwatch
            return .finish(.removed)
        }
        // A stop is a state, whatever made it: decided before anything else, so a reset (or
        // a removal) while we were away, which reads as stopped, ends it with 0.
        if condition == .stop {
            // Except at the start: a first state that reads as never started may be a name
            // that never was (a typo), with nothing to wait for; `List` tells.
            if previous == nil, stopwatch.isBlank {
                unanswered = stopwatch
                return .checkListed
            }
            last = stopwatch
            return stopwatch.state != .counting ? .finish(.happened) : nil
        }
        // A `current` after the first is a reconnection: what happened while we were away
        // shows only in how the state differs. One that now reads as never started, and did
        // not, was removed or (a plain stopwatch) reset: `List` tells which.
        let reconnected = update.event == .current && previous != nil
        if reconnected, let previous, stopwatch.isBlank, !previous.isBlank {
            unanswered = stopwatch
            return .checkListed
        }
        last = stopwatch
        switch condition {
        case .expired:
            return update.event == .expired || stopwatch.hasReachedTarget ? .finish(.happened) : nil
        case .stop:
            return nil  // decided above
        case .phase:
            // The next phase began; or there is none left to wait for: the cycle has ended
            // (expired in its last phase of its last round, told as `expired`, maybe before the
            // wait began). After a reconnection, a `current` in another phase or round than
            // before tells of a change while we were away.
            if update.event == .phase || stopwatch.hasFinishedCycle { return .finish(.happened) }
            guard reconnected, let previous, let before = previous.cycle, let now = stopwatch.cycle else { return nil }
            return before.phase != now.phase || before.round != now.round ? .finish(.happened) : nil
        case .change:
            switch update.event {
            case .tick: return nil
            case .current:
                guard reconnected, let previous else { return nil }
                return Self.changed(from: previous, to: stopwatch) ? .finish(.happened) : nil
            default: return .finish(.happened)
            }
        }
    }

    /// The answer to `checkListed`: whether the stopwatch's name is in `List`. At the start
    /// (asked only of a wait for a stop): not there, it was never created; there, it is
    /// stopped, which was waited for. After a reconnection: not there, it was removed; there,
    /// it was reset, which is a change, and leaves an expiry to wait for. Nil (go on) too
    /// when nothing was asked.
    package mutating func listed(_ isListed: Bool) -> WaitOutcome? {
        guard let blank = unanswered else { return nil }
        unanswered = nil
        let atStart = last == nil
        last = blank
        if atStart { return isListed ? .happened : .neverCreated }
        guard isListed else { return .removed }
        return condition == .change ? .happened : nil
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
    /// A cycle's next phase began (a `phase` event; after a reconnection, another phase or
    /// round than before), or the cycle has ended: expired in the last phase of its last
    /// round, where no phase follows (at once when it already is).
    case phase
}

/// What `WaitMachine` asks of its caller after an update, when not to go on reading.
package enum WaitStep: Equatable, Sendable {
    /// The wait ends so.
    case finish(WaitOutcome)
    /// The stopwatch reads as never started: at the start of a wait for a stop, it may never
    /// have been created; after a reconnection, when it did not before, it was removed
    /// meanwhile, or it is a plain stopwatch that was reset. The state cannot tell them
    /// apart; `List` can. The caller calls it and hands whether the name is in it
    /// to `WaitMachine.listed(_:)`.
    case checkListed
}

/// How `swctl wait` ends, when the daemon did not fail it.
package enum WaitOutcome: Equatable, Sendable {
    /// What it waited for happened (or had already).
    case happened
    /// The stopwatch was removed: it will not happen.
    case removed
    /// A wait for a stop on a name never created (or removed before): a stopwatch that does
    /// not exist is not "done", and a typo is told, not taken as done.
    case neverCreated
    /// `--timeout` passed first.
    case timedOut

    /// SPEC §5: 0 when it happens, 1 when removed (or never there, as the daemon refuses a
    /// Stop of it), 124 on timeout (as timeout(1) has it).
    package var exitStatus: Int32 {
        switch self {
        case .happened: 0
        case .removed, .neverCreated: 1
        case .timedOut: 124
        }
    }
}
