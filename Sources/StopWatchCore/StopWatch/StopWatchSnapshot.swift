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
    /// While counting: the boot clock's reading when this counting interval began, whichever
    /// clock it counts on; nil otherwise. The interval's length in wall-clock time (suspend
    /// included) is the boot clock's time since, where `intervalElapsed(at:)` is what it
    /// counted: the two differ for a stopwatch that leaves sleep out.
    public private(set) var intervalStartBoot: Duration?
    /// Whether it counts time in suspend (the boot clock) or only time awake (the awake
    /// clock). Every clock reading of this snapshot (`origin`, `expiry`, `latestTransition`,
    /// the `now` its methods take) is one of that clock: `reading(at:)` picks it.
    public private(set) var countsSleep: Bool
    /// While counting: the note of the counting interval, if its start gave one. Nil otherwise.
    public private(set) var note: String?
    /// While paused: the clock reading it was stopped at (the instant it was dated at, for a
    /// stop in the past); nil otherwise, or when unknown (restored from a file that did not
    /// say). See `latestTransition`.
    public private(set) var pausedAt: Duration?
    /// While paused: the boot clock's reading of `pausedAt`, whichever clock it counts on;
    /// nil when unknown. A stop in the past is checked and dated on the boot clock, which
    /// runs with the wall clock through a suspend (see `transition`).
    public private(set) var pausedAtBoot: Duration?
    /// While counting: the boot clock's reading when its latest lap was taken, if known (for
    /// one that counts sleep, `origin + laps.last` says it anyway).
    public private(set) var latestLapBoot: Duration?
    /// The cycle it runs, if any: its phases and which one runs now. `target` is the
    /// current phase's (grown by a snooze).
    public private(set) var cycle: StopWatchCycle?
    /// A countdown's snoozes since it last began anew; nil when none.
    public private(set) var snooze: StopWatchSnooze?

    /// The clock reading of its latest start or stop, which no start or stop may be dated
    /// before: while counting, where its counting interval began; while paused, `pausedAt`;
    /// nil when stopped (a reset forgets: what came before is in the history, which the
    /// daemon checks).
    public var latestTransition: Duration? {
        switch state {
        case .stopped: nil
        case .counting: origin.map { $0 + (elapsedAtIntervalStart ?? .zero) }
        case .pause: pausedAt
        }
    }

    /// `latestTransition` on the boot clock: where its counting interval began while counting
    /// (`intervalStartBoot`), `pausedAtBoot` while paused; nil when stopped or unknown.
    public var latestTransitionBoot: Duration? {
        switch state {
        case .stopped: nil
        case .counting: intervalStartBoot
        case .pause: pausedAtBoot ?? (countsSleep ? pausedAt : nil)
        }
    }

    /// A stopwatch never started: stopped, at zero, no laps.
    public static let stopped = StopWatchSnapshot(state: .stopped, laps: [], origin: nil)

    private init(
        state: StopWatchState, laps: [Duration], origin: Duration?, target: Duration? = nil, hasExpired: Bool = false,
        elapsedAtIntervalStart: Duration? = nil, countsSleep: Bool = true, note: String? = nil, latestTransition: Duration? = nil,
        intervalStartBoot: Duration? = nil, latestTransitionBoot: Duration? = nil, latestLapBoot: Duration? = nil,
        cycle: StopWatchCycle? = nil, snooze: StopWatchSnooze? = nil
    ) {
        self.state = state
        self.laps = laps
        self.origin = origin
        self.target = target
        self.hasExpired = target != nil && hasExpired
        self.elapsedAtIntervalStart = origin == nil ? nil : elapsedAtIntervalStart ?? .zero
        self.intervalStartBoot = origin.map { intervalStartBoot ?? $0 + (elapsedAtIntervalStart ?? .zero) }
        self.countsSleep = countsSleep
        self.note = origin == nil ? nil : note
        self.pausedAt = state.isPaused ? latestTransition : nil
        self.pausedAtBoot = state.isPaused && latestTransition != nil ? latestTransitionBoot ?? (countsSleep ? latestTransition : nil) : nil
        self.latestLapBoot = origin == nil || laps.isEmpty ? nil : latestLapBoot
        self.cycle = target == nil ? nil : cycle
        self.snooze = target == nil ? nil : snooze
    }

    /// This snapshot running `cycle` and with `snooze`, as restored from storage: a cycle
    /// needs a target (a countdown's), else both are dropped.
    public func restoring(cycle: StopWatchCycle?, snooze: StopWatchSnooze?) -> StopWatchSnapshot {
        var restored = self
        restored.cycle = target == nil ? nil : cycle
        restored.snooze = target == nil ? nil : snooze
        return restored
    }

    /// A paused stopwatch, as restored from storage; `latestTransition`: when it was stopped,
    /// on its clock, and `latestTransitionBoot` on the boot clock (nil: the same reading, for
    /// one that counts sleep; unknown for one that does not).
    public static func paused(
        at elapsed: Duration, laps: [Duration] = [], target: Duration? = nil, hasExpired: Bool = false, countsSleep: Bool = true,
        latestTransition: Duration? = nil, latestTransitionBoot: Duration? = nil
    ) -> StopWatchSnapshot {
        StopWatchSnapshot(
            state: .pause(max(elapsed, .zero)), laps: laps, origin: nil, target: target, hasExpired: hasExpired,
            countsSleep: countsSleep, latestTransition: latestTransition, latestTransitionBoot: latestTransitionBoot
        )
    }

    /// A stopwatch counting since `origin` on its clock, measured `now`, whose current
    /// counting interval began at elapsed time `intervalStart` (zero: it has counted without a
    /// pause since its origin), at boot clock reading `intervalStartBoot` (nil: where its own
    /// clock says, `origin + intervalStart`, exact for one that counts sleep), whose latest lap
    /// was taken at boot clock reading `latestLapBoot` (nil: unknown, or where its own clock
    /// says).
    public static func counting(
        since origin: Duration, laps: [Duration] = [], now: Duration, target: Duration? = nil, hasExpired: Bool = false,
        intervalStart: Duration = .zero, countsSleep: Bool = true, note: String? = nil, intervalStartBoot: Duration? = nil,
        latestLapBoot: Duration? = nil
    ) -> StopWatchSnapshot {
        let elapsed = max(now - origin, .zero)
        return StopWatchSnapshot(
            state: .counting(elapsed), laps: laps, origin: origin, target: target, hasExpired: hasExpired,
            elapsedAtIntervalStart: min(max(intervalStart, .zero), elapsed), countsSleep: countsSleep, note: note,
            intervalStartBoot: intervalStartBoot, latestLapBoot: latestLapBoot
        )
    }

    /// A stopped stopwatch that is a countdown of `target`, as restored from storage.
    public static func stopped(target: Duration?, countsSleep: Bool = true) -> StopWatchSnapshot {
        StopWatchSnapshot(state: .stopped, laps: [], origin: nil, target: target, countsSleep: countsSleep)
    }

    /// What its own clock reads at `instant`: the boot clock, or the awake one.
    public func reading(at instant: StopWatchInstant) -> Duration {
        instant.reading(countingSleep: countsSleep)
    }

    /// The elapsed time at `instant`, read on its own clock.
    public func elapsed(at instant: StopWatchInstant) -> Duration {
        elapsed(at: reading(at: instant))
    }

    /// The time counted in the current counting interval at `instant`; nil when not counting.
    public func intervalElapsed(at instant: StopWatchInstant) -> Duration? {
        intervalElapsed(at: reading(at: instant))
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
        // A switch of clocks moves the origin onto the other clock: the same interval.
        return !next.state.isCounting || (next.countsSleep == countsSleep && next.origin != origin)
    }

    /// The clock reading at which this countdown expires: while it counts towards a target
    /// its expiry was not yet recorded for. Nil otherwise: a paused or stopped countdown
    /// never expires. It may lie in the past (a target set below the elapsed time, or a
    /// restart after the moment): it is due then at once.
    public var expiry: Duration? {
        guard let origin, let target, state.isCounting, !hasExpired else { return nil }
        return origin + target
    }

    /// The stopwatch after `command` at clock reading `now`, where both clocks read the same.
    public func applying(_ command: StopWatchCommand, at now: Duration) throws(InvalidTransition) -> StopWatchSnapshot {
        try applying(command, at: StopWatchInstant(now))
    }

    /// The stopwatch after `command` at `instant` (read on its own clock, and on the other
    /// one only to switch clocks).
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
    /// | setCountsSleep(c) | on the other clock, elapsed, laps and state unchanged |||
    /// | startCycle(c) | `counting(0)`, c's first phase of round 1, laps cleared, whatever the state |||
    /// | next         | a cycle's next phase, `counting(0)`, whatever the state; refused without one |||
    /// | advance      | unchanged       | an expired automatic phase: the next, from its instant | unchanged |
    /// | snooze(d)    | refused         | expired: target elapsed + d; refused otherwise | refused |
    /// | restart      | a countdown from `counting(0)`; a cycle from its first phase; refused for a plain stopwatch |||
    ///
    /// A target stays through start, stop, lap and reset. A new target (not the same one
    /// again, which changes nothing), a reset and a countdown make the countdown able to
    /// expire again. A cycle stays through start, stop, lap and setCountsSleep; reset takes
    /// it back to its first phase of round 1; setTarget and countdown end it. A reset, a
    /// restart and a new target take back the snoozes.
    ///
    /// `transition(t, ago: d, note:)` is start, stop or toggle as if it had come `d` earlier:
    /// a start 10 minutes ago reads 10 minutes now; a stop in the past pauses at the elapsed
    /// time of then, taking off the time since. One dated before the latest transition, or (a
    /// stop) before the counting interval's start or its latest lap, is refused, with how far
    /// back it may be (`InvalidTransition.earliestAgo`). A countdown started in the past whose
    /// instant has passed is due at once (`expiry` is in the past); one already expired stays
    /// so. The note goes with a start (a resume without one has none) and ends with the
    /// interval.
    public func applying(_ command: StopWatchCommand, at instant: StopWatchInstant) throws(InvalidTransition) -> StopWatchSnapshot {
        let now = reading(at: instant)
        switch (command, state) {
        case (.start, _):
            return try transition(.start, ago: .zero, note: nil, command: command, now: now, boot: instant.boot)
        case (.stop, _):
            return try transition(.stop, ago: .zero, note: nil, command: command, now: now, boot: instant.boot)
        case (.toggle, _):
            return try transition(.toggle, ago: .zero, note: nil, command: command, now: now, boot: instant.boot)
        case (.transition(let kind, let ago, let note), _):
            return try transition(kind, ago: max(ago, .zero), note: note, command: command, now: now, boot: instant.boot)
        case (.reset, .stopped):
            return self
        case (.reset, .pause):
            // A cycle goes back to its first phase of round 1; a snoozed countdown to its
            // target from before the snoozes: reset and start run the same again.
            let first = cycle?.fromTheStart
            return StopWatchSnapshot.stopped(target: first?.current.target ?? snooze?.originalTarget ?? target, countsSleep: countsSleep)
                .restoring(cycle: first, snooze: nil)
        case (.lap, .counting):
            let split = elapsed(at: now)
            var lapped = self
            lapped.state = .counting(split)
            lapped.laps.append(split)
            lapped.latestLapBoot = instant.boot
            return lapped
        case (.reset, .counting), (.lap, .stopped), (.lap, .pause):
            throw InvalidTransition(command: command, snapshot: self)
        case (.setTarget(let newTarget), _):
            // The same target again changes nothing, but for a cycle or a snoozed countdown,
            // which it ends as any target does.
            guard newTarget != target || cycle != nil || snooze != nil else { return self }
            // Brought up to date too, like every other change: its watchers are told it.
            var retargeted = ticked(at: now)
            retargeted.target = newTarget
            retargeted.hasExpired = false
            // A target of its own: no longer a cycle's phase, nor snoozed.
            retargeted.cycle = nil
            retargeted.snooze = nil
            return retargeted
        case (.countdown(let newTarget), _):
            return .counting(since: now, now: now, target: newTarget, countsSleep: countsSleep, intervalStartBoot: instant.boot)
        case (.expire, _):
            guard let expiry, expiry <= now else { return self }
            var expired = ticked(at: now)
            expired.hasExpired = true
            return expired
        case (.setCountsSleep(let counts), _):
            guard counts != countsSleep else { return self }
            // Every reading moves onto the other clock by the difference between the two now:
            // nothing counted so far changes, and from here on only the other clock's time
            // counts. The boot clock's readings stay: the latest stop, when known there, is
            // that reading on the boot clock (the shift would add the sleep since); on the
            // awake clock it is placed as if nothing slept since (the awake clock cannot tell).
            let shift = instant.reading(countingSleep: counts) - now
            var switched = ticked(at: now)
            switched.countsSleep = counts
            switched.origin = origin.map { $0 + shift }
            switched.pausedAt = counts ? pausedAtBoot ?? pausedAt.map { $0 + shift } : pausedAt.map { $0 + shift }
            return switched
        case (.startCycle(let newCycle), _):
            return beginning(newCycle.fromTheStart, at: now, boot: instant.boot)
        case (.next, _):
            guard let following = cycle?.next else { throw InvalidTransition(command: command, snapshot: self) }
            return beginning(following, at: now, boot: instant.boot)
        case (.advance, .counting):
            // At the instant the phase expired: the next counts from there, so no time is
            // lost to when the expiry was noticed (a suspend, a daemon that was down).
            guard let cycle, cycle.auto, hasExpired, let origin, let target, let following = cycle.next else { return self }
            let expiredAt = min(origin + target, now)
            let advanced = beginning(following, at: expiredAt, boot: instant.boot - (now - expiredAt))
            return advanced.ticked(at: now)
        case (.advance, _):
            return self
        case (.snooze(let by), .counting):
            guard hasExpired, let target else { throw InvalidTransition(command: command, snapshot: self) }
            var snoozed = ticked(at: now)
            snoozed.target = elapsed(at: now) + by
            snoozed.hasExpired = false
            snoozed.snooze = StopWatchSnooze(count: (snooze?.count ?? 0) + 1, originalTarget: snooze?.originalTarget ?? target)
            return snoozed
        case (.snooze, _):
            throw InvalidTransition(command: command, snapshot: self)
        case (.restart, _):
            if let cycle { return beginning(cycle.fromTheStart, at: now, boot: instant.boot) }
            guard let target else { throw InvalidTransition(command: command, snapshot: self) }
            return .counting(
                since: now, now: now, target: snooze?.originalTarget ?? target, countsSleep: countsSleep, intervalStartBoot: instant.boot
            )
        }
    }

    /// `cycle` at its current phase, counting from zero at clock reading `start` (boot clock
    /// `boot`): laps cleared, as a countdown.
    private func beginning(_ cycle: StopWatchCycle, at start: Duration, boot: Duration) -> StopWatchSnapshot {
        StopWatchSnapshot.counting(
            since: start, now: start, target: cycle.current.target, countsSleep: countsSleep, intervalStartBoot: boot
        ).restoring(cycle: cycle, snooze: nil)
    }

    /// Start, stop or toggle dated `ago` before `now` (which the boot clock reads as `boot`).
    ///
    /// `ago` is wall-clock time, which the boot clock keeps through a suspend: the instant is
    /// checked against the latest transition on the boot clock. A stopwatch that leaves sleep
    /// out then needs the instant on its awake clock, which cannot say when it slept. With A
    /// the awake time since the latest transition and S the sleep since (what the boot clock
    /// ran beyond A), a stop is taken as having come before the sleep ("I stopped, then closed
    /// the lid": A − max(ago − S, 0) counted since), a start as having come after it ("I
    /// slept, then started": min(ago, A) counted since) — each unless the sleep cannot lie
    /// there: a stop less than S ago but at most A ago came after the sleep (awake `ago`
    /// since), a start more than A ago but at least S ago before it (`ago − S` since). Always
    /// within [the latest transition, now] on the awake clock.
    private func transition(
        _ kind: StopWatchCommand.Transition, ago: Duration, note: String?, command: StopWatchCommand, now: Duration, boot: Duration
    ) throws(InvalidTransition) -> StopWatchSnapshot {
        let starts = switch kind {
        case .start: true
        case .stop: false
        case .toggle: !state.isCounting
        }
        // A start while counting, a stop while not: nothing to do, whenever it is dated.
        guard starts != state.isCounting else { return self }
        let earliest = ago > .zero ? earliestTransition(stopping: !starts, now: now, boot: boot) : nil
        if let earliest, boot - ago < earliest.boot {
            throw InvalidTransition(command: command, snapshot: self, earliestAgo: max(boot - earliest.boot, .zero))
        }
        var instant = now - ago
        if !countsSleep, let earliest {
            let awakeSince = max(now - earliest.own, .zero)
            let asleepSince = max((boot - earliest.boot) - awakeSince, .zero)
            // Whether all the sleep fits after the instant (ago ≥ S), or before it (ago ≤ A).
            let sleepFitsAfter = ago >= asleepSince
            let sleepFitsBefore = ago <= awakeSince
            let sleptBefore = starts ? sleepFitsBefore || !sleepFitsAfter : sleepFitsBefore && !sleepFitsAfter
            instant = sleptBefore ? now - min(ago, awakeSince) : now - max(ago - asleepSince, .zero)
            instant = min(max(instant, earliest.own), now)
        }
        if starts {
            return StopWatchSnapshot.counting(
                since: instant - state.elapsed, laps: laps, now: now, target: target, hasExpired: hasExpired,
                intervalStart: state.elapsed, countsSleep: countsSleep, note: note, intervalStartBoot: boot - ago
            ).restoring(cycle: cycle, snooze: snooze)
        }
        // Dated to a wall-clock millisecond: the elapsed time in whole milliseconds (the
        // nearest), so that a stop dated 12:30 of a start dated 09:25 reads 3:05:00 and not
        // 3:04:59.999 (the clocks are read a fraction apart at each command). Never below a lap.
        var counted = elapsed(at: instant)
        if ago > .zero {
            counted = max(.milliseconds((counted + .microseconds(500)).nanoseconds / 1_000_000), laps.last ?? .zero)
        }
        return StopWatchSnapshot.paused(
            at: counted, laps: laps, target: target, hasExpired: hasExpired, countsSleep: countsSleep,
            latestTransition: instant, latestTransitionBoot: boot - ago
        ).restoring(cycle: cycle, snooze: snooze)
    }

    /// The earliest instant a transition may be dated at, on its own clock and on the boot
    /// clock: not before the latest one (for a stop, where its counting interval began), nor
    /// a stop before a lap of its counting interval (the lap would then lie after the stop).
    /// A reading not known on the boot clock (a lap or stop restored from a file of an earlier
    /// version) is placed there as if nothing slept since.
    private func earliestTransition(stopping: Bool, now: Duration, boot: Duration) -> (own: Duration, boot: Duration)? {
        func onBoot(_ own: Duration, _ known: Duration?) -> Duration {
            known ?? (countsSleep ? own : boot - (now - own))
        }
        var earliest = latestTransition.map { (own: $0, boot: onBoot($0, latestTransitionBoot)) }
        if stopping, let origin, let intervalStart = elapsedAtIntervalStart, let lap = laps.last, lap > intervalStart {
            let lapBoot = onBoot(origin + lap, latestLapBoot)
            if earliest.map({ lapBoot > $0.boot }) ?? true { earliest = (origin + lap, lapBoot) }
        }
        return earliest
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
