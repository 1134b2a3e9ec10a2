/// Everything a stopwatch is at one moment: its state, its laps, while counting the clock
/// reading its elapsed time is counted from, and for a countdown its target.
///
/// Elapsed time is always computed from the clock (`now − origin`), never by adding
/// ticks, so a late or missed tick never makes it drift. A countdown's expiry is derived
/// the same way: the clock reading at which elapsed reaches the target (`expiry`).
public struct StopWatchSnapshot: Equatable, Sendable {
    public private(set) var state: StopWatchState
    /// Split times since the last reset (total elapsed at each lap), oldest first.
    public private(set) var laps: [Duration]
    /// While counting: the clock reading at which elapsed was zero, so that
    /// `elapsed(at: now) == now − origin`. Nil otherwise.
    public private(set) var origin: Duration?
    /// A countdown's length; nil for a plain stopwatch. A countdown counts like any
    /// stopwatch, on past its target (overtime) until stopped.
    public private(set) var target: Duration?
    /// Whether this countdown's expiry was recorded (`expire`) since it last began anew
    /// (`reset`, `countdown`, a new target): it expires once.
    public private(set) var hasExpired: Bool
    /// While counting: the elapsed time at which this counting interval began (zero after a
    /// start from stopped or a countdown, the paused time after a resume). Nil otherwise. The
    /// interval's own time is `intervalElapsed(at:)`; a history of intervals is built on it.
    public private(set) var elapsedAtIntervalStart: Duration?

    /// A stopwatch never started: stopped, at zero, no laps.
    public static let stopped = StopWatchSnapshot(state: .stopped, laps: [], origin: nil)

    private init(
        state: StopWatchState, laps: [Duration], origin: Duration?, target: Duration? = nil, hasExpired: Bool = false,
        elapsedAtIntervalStart: Duration? = nil
    ) {
        self.state = state
        self.laps = laps
        self.origin = origin
        self.target = target
        self.hasExpired = target != nil && hasExpired
        self.elapsedAtIntervalStart = origin == nil ? nil : elapsedAtIntervalStart ?? .zero
    }

    /// A paused stopwatch, as restored from storage.
    public static func paused(
        at elapsed: Duration, laps: [Duration] = [], target: Duration? = nil, hasExpired: Bool = false
    ) -> StopWatchSnapshot {
        StopWatchSnapshot(state: .pause(max(elapsed, .zero)), laps: laps, origin: nil, target: target, hasExpired: hasExpired)
    }

    /// A stopwatch counting since `origin` on the clock, measured `now`, whose current
    /// counting interval began at elapsed time `intervalStart` (zero: it has counted without a
    /// pause since its origin).
    public static func counting(
        since origin: Duration, laps: [Duration] = [], now: Duration, target: Duration? = nil, hasExpired: Bool = false,
        intervalStart: Duration = .zero
    ) -> StopWatchSnapshot {
        let elapsed = max(now - origin, .zero)
        return StopWatchSnapshot(
            state: .counting(elapsed), laps: laps, origin: origin, target: target, hasExpired: hasExpired,
            elapsedAtIntervalStart: min(max(intervalStart, .zero), elapsed)
        )
    }

    /// A stopped stopwatch that is a countdown of `target`, as restored from storage.
    public static func stopped(target: Duration?) -> StopWatchSnapshot {
        StopWatchSnapshot(state: .stopped, laps: [], origin: nil, target: target)
    }

    /// The elapsed time at clock reading `now`: exact while counting, frozen otherwise.
    public func elapsed(at now: Duration) -> Duration {
        guard let origin else { return state.elapsed }
        return max(now - origin, .zero)
    }

    /// The time counted in the current counting interval at clock reading `now` (since the
    /// start or resume that began it); nil when not counting.
    public func intervalElapsed(at now: Duration) -> Duration? {
        guard let elapsedAtIntervalStart, origin != nil else { return nil }
        return max(elapsed(at: now) - elapsedAtIntervalStart, .zero)
    }

    /// Whether going from this snapshot to `next` ends a counting interval: a stop, or a
    /// countdown that begins anew while counting (a new origin). What the history records.
    public func endsInterval(goingTo next: StopWatchSnapshot) -> Bool {
        guard let origin, state.isCounting else { return false }
        return !next.state.isCounting || next.origin != origin
    }

    /// The clock reading at which this countdown expires: while it counts towards a target
    /// its expiry was not yet recorded for. Nil otherwise: a paused or stopped countdown
    /// never expires. It may lie in the past (a target set below the elapsed time, or a
    /// restart after the moment): it is due then at once.
    public var expiry: Duration? {
        guard let origin, let target, state.isCounting, !hasExpired else { return nil }
        return origin + target
    }

    /// The stopwatch after `command` at clock reading `now`.
    ///
    /// | command      | from `stopped`  | from `counting(x)` | from `pause(x)` |
    /// |--------------|-----------------|--------------------|-----------------|
    /// | start        | `counting(0)`   | unchanged          | `counting(x)`   |
    /// | stop         | unchanged       | `pause(x)`         | unchanged       |
    /// | toggle       | `counting(0)`   | `pause(x)`         | `counting(x)`   |
    /// | reset        | unchanged       | refused            | `stopped`, laps cleared |
    /// | lap          | refused         | split x recorded   | refused         |
    /// | setTarget(t) | target t        | target t           | target t        |
    /// | countdown(t) | `counting(0)`, target t, laps cleared, whatever the state |||
    /// | expire       | unchanged       | expired, if due    | unchanged       |
    ///
    /// A target stays through start, stop, lap and reset. A new target (not the same one
    /// again, which changes nothing), a reset and a countdown make the countdown able to
    /// expire again.
    public func applying(_ command: StopWatchCommand, at now: Duration) throws(InvalidTransition) -> StopWatchSnapshot {
        switch (command, state) {
        case (.start, .counting), (.stop, .stopped), (.stop, .pause), (.reset, .stopped):
            return self
        case (.start, _), (.toggle, .stopped), (.toggle, .pause):
            return .counting(
                since: now - state.elapsed, laps: laps, now: now, target: target, hasExpired: hasExpired,
                intervalStart: state.elapsed
            )
        case (.stop, .counting), (.toggle, .counting):
            return .paused(at: elapsed(at: now), laps: laps, target: target, hasExpired: hasExpired)
        case (.reset, .pause):
            return .stopped(target: target)
        case (.lap, .counting):
            let split = elapsed(at: now)
            var lapped = self
            lapped.state = .counting(split)
            lapped.laps.append(split)
            return lapped
        case (.reset, .counting), (.lap, .stopped), (.lap, .pause):
            throw InvalidTransition(command: command, snapshot: self)
        case (.setTarget(let newTarget), _):
            guard newTarget != target else { return self }
            // Brought up to date too, like every other change: its watchers are told it.
            var retargeted = ticked(at: now)
            retargeted.target = newTarget
            retargeted.hasExpired = false
            return retargeted
        case (.countdown(let newTarget), _):
            return .counting(since: now, now: now, target: newTarget)
        case (.expire, _):
            guard let expiry, expiry <= now else { return self }
            var expired = ticked(at: now)
            expired.hasExpired = true
            return expired
        }
    }

    /// The snapshot a tick at `now` publishes: the elapsed time brought up to date while
    /// counting; unchanged otherwise.
    public func ticked(at now: Duration) -> StopWatchSnapshot {
        guard origin != nil, state.isCounting else { return self }
        var ticked = self
        ticked.state = .counting(elapsed(at: now))
        return ticked
    }

    /// The clock reading at which elapsed next crosses a multiple of `interval` after `now`,
    /// or nil when not counting.
    public func nextTick(after now: Duration, every interval: Duration) -> Duration? {
        guard let origin, state.isCounting else { return nil }
        let step = interval.nanoseconds
        guard step > 0 else { return nil }
        // Checked: an elapsed time near the end of Int64 (a record claiming ~292 years) has no
        // next multiple that fits; such a stopwatch simply gets no more ticks.
        let (intervals, countOverflow) = (elapsed(at: now).nanoseconds / step).addingReportingOverflow(1)
        let (offset, offsetOverflow) = intervals.multipliedReportingOverflow(by: step)
        guard !countOverflow, !offsetOverflow else { return nil }
        return origin + .nanoseconds(offset)
    }
}
