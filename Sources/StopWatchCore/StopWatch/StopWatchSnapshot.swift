/// Everything a stopwatch is at one moment: its state, its laps, and — while counting —
/// the clock reading its elapsed time is counted from.
///
/// Elapsed time is always computed from the clock (`now − origin`), never by adding
/// ticks, so a late or missed tick never makes it drift.
public struct StopWatchSnapshot: Equatable, Sendable {
    public private(set) var state: StopWatchState
    /// Split times since the last reset (total elapsed at each lap), oldest first.
    public private(set) var laps: [Duration]
    /// While counting: the clock reading at which elapsed was zero, so that
    /// `elapsed(at: now) == now − origin`. Nil otherwise.
    public private(set) var origin: Duration?

    /// A stopwatch never started: stopped, at zero, no laps.
    public static let stopped = StopWatchSnapshot(state: .stopped, laps: [], origin: nil)

    private init(state: StopWatchState, laps: [Duration], origin: Duration?) {
        self.state = state
        self.laps = laps
        self.origin = origin
    }

    /// A paused stopwatch, as restored from storage.
    public static func paused(at elapsed: Duration, laps: [Duration] = []) -> StopWatchSnapshot {
        StopWatchSnapshot(state: .pause(max(elapsed, .zero)), laps: laps, origin: nil)
    }

    /// A stopwatch counting since `origin` on the clock, measured `now`.
    public static func counting(since origin: Duration, laps: [Duration] = [], now: Duration) -> StopWatchSnapshot {
        StopWatchSnapshot(state: .counting(max(now - origin, .zero)), laps: laps, origin: origin)
    }

    /// The elapsed time at clock reading `now`: exact while counting, frozen otherwise.
    public func elapsed(at now: Duration) -> Duration {
        guard let origin else { return state.elapsed }
        return max(now - origin, .zero)
    }

    /// The stopwatch after `command` at clock reading `now`.
    ///
    /// | command | from `stopped`  | from `counting(x)` | from `pause(x)` |
    /// |---------|-----------------|--------------------|-----------------|
    /// | start   | `counting(0)`   | unchanged          | `counting(x)`   |
    /// | stop    | unchanged       | `pause(x)`         | unchanged       |
    /// | toggle  | `counting(0)`   | `pause(x)`         | `counting(x)`   |
    /// | reset   | unchanged       | refused            | `stopped`, laps cleared |
    /// | lap     | refused         | split x recorded   | refused         |
    public func applying(_ command: StopWatchCommand, at now: Duration) throws(InvalidTransition) -> StopWatchSnapshot {
        switch (command, state) {
        case (.start, .counting), (.stop, .stopped), (.stop, .pause), (.reset, .stopped):
            return self
        case (.start, _), (.toggle, .stopped), (.toggle, .pause):
            return .counting(since: now - state.elapsed, laps: laps, now: now)
        case (.stop, .counting), (.toggle, .counting):
            return .paused(at: elapsed(at: now), laps: laps)
        case (.reset, .pause):
            return .stopped
        case (.lap, .counting):
            let split = elapsed(at: now)
            return StopWatchSnapshot(state: .counting(split), laps: laps + [split], origin: origin)
        case (.reset, .counting), (.lap, .stopped), (.lap, .pause):
            throw InvalidTransition(command: command, snapshot: self)
        }
    }

    /// The snapshot a tick at `now` publishes: the elapsed time brought up to date while
    /// counting; unchanged otherwise.
    public func ticked(at now: Duration) -> StopWatchSnapshot {
        guard let origin, state.isCounting else { return self }
        return .counting(since: origin, laps: laps, now: now)
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
