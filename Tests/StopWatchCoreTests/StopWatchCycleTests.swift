import StopWatchCore
import StopWatchTesting
import Testing

/// Cycles (SPEC §3 "Cycles"): a countdown whose target is its current phase's, each phase
/// counted from the instant the one before expired, derived from the clock as elapsed time
/// is (never from when the expiry was noticed); Next, Snooze and Restart, and what they refuse.
@Suite("StopWatch cycles")
struct StopWatchCycleTests {
    /// The pomodoro, as `CyclePlan.pomodoro` (StopwatchProtocol, which this target does not
    /// depend on) has it: four times 25 minutes of focus and a break, 5 minutes each but the
    /// last, 15.
    static let pomodoroPhases: [StopWatchCycle.Phase] = [
        .init(label: "focus", target: .seconds(1500)), .init(label: "break", target: .seconds(300)),
        .init(label: "focus", target: .seconds(1500)), .init(label: "break", target: .seconds(300)),
        .init(label: "focus", target: .seconds(1500)), .init(label: "break", target: .seconds(300)),
        .init(label: "focus", target: .seconds(1500)), .init(label: "long-break", target: .seconds(900)),
    ]

    static func pomodoro(rounds: Int? = 4, auto: Bool = true) -> StopWatchCycle {
        StopWatchCycle(phases: pomodoroPhases, rounds: rounds, auto: auto)!
    }

    /// Two short phases, `work` and `rest`.
    static func workRest(rounds: Int? = 1, auto: Bool) -> StopWatchCycle {
        StopWatchCycle(phases: [.init(label: "work", target: .seconds(10)), .init(label: "rest", target: .seconds(5))], rounds: rounds, auto: auto)!
    }

    /// Moves `time` to `reading` on its boot clock, firing nothing.
    static func move(_ time: ManualTime, to reading: Duration) {
        time.move(by: reading - time.now())
    }

    @Test("a whole pomodoro of four rounds: 32 phases, each counted from the instant the one before expired; the last stays expired")
    func wholePomodoro() throws {
        let time = ManualTime(now: .seconds(1000))
        let stopWatch = StopWatchUseCase(clock: time, timers: time, tick: .seconds(1))
        var snapshot = try stopWatch.dispatcher.perform(.startCycle(Self.pomodoro()))
        var start = Duration.seconds(1000)
        var labels: [String] = []
        for index in 0..<32 {
            let cycle = try #require(snapshot.cycle)
            #expect(cycle.phase == index % 8, "phase \(index)")
            #expect(cycle.round == index / 8 + 1, "phase \(index)")
            #expect(snapshot.origin == start, "phase \(index) counts from where the one before expired")
            #expect(snapshot.state == .counting(.zero))
            #expect(snapshot.target == cycle.current.target)
            #expect(!snapshot.hasExpired)
            #expect(snapshot.latestTransitionBoot == start, "its counting interval began there")
            labels.append(cycle.current.label)
            let expiry = try #require(snapshot.expiry)
            #expect(expiry == start + cycle.current.target)
            // A millisecond early: nothing expires, nothing advances.
            Self.move(time, to: expiry - .milliseconds(1))
            #expect(try stopWatch.dispatcher.perform(.expire).hasExpired == false)
            #expect(try stopWatch.dispatcher.perform(.advance).cycle == cycle)
            Self.move(time, to: expiry)
            let expired = try stopWatch.dispatcher.perform(.expire)
            #expect(expired.hasExpired)
            snapshot = try stopWatch.dispatcher.perform(.advance)
            if index == 31 {
                #expect(snapshot == expired, "nothing follows the last phase of the last round")
            }
            start = expiry
        }
        #expect(labels == Array(repeating: Self.pomodoroPhases.map(\.label), count: 4).flatMap { $0 })
        // Four rounds of 7,800 s, not a millisecond lost between phases.
        #expect(start == .seconds(1000 + 4 * 7800))
        let last = try #require(snapshot.cycle)
        #expect(last.isLast && last.phase == 7 && last.round == 4)
        #expect(snapshot.hasExpired)
        // It stays there, counting on in overtime; advancing again changes nothing.
        Self.move(time, to: start + .seconds(60))
        #expect(try stopWatch.dispatcher.perform(.advance) == snapshot)
        #expect(stopWatch.state.current.elapsed(at: time.now()) == .seconds(960))
        #expect(stopWatch.state.current.cycle == last)
    }

    @Test("a suspend across three phase ends: each phase is told at its own instant, in order, and the right one runs on resume")
    func suspendAcrossThreePhaseEnds() throws {
        let time = ManualTime(now: .seconds(1000))
        let stopWatch = StopWatchUseCase(clock: time, timers: time, tick: .seconds(1))
        _ = try stopWatch.dispatcher.perform(.startCycle(Self.pomodoro()))
        time.advance(by: .seconds(20 * 60))
        // The lid closes for 2,200 s: focus ends at 2,500, the break at 2,800, the next focus
        // at 4,300; the machine wakes at 4,400, 100 s into the second break.
        time.suspend(for: .seconds(2200))
        #expect(time.now() == .seconds(4400))
        var told: [(phase: Int, label: String, start: Duration)] = []
        while true {
            guard try stopWatch.dispatcher.perform(.expire).hasExpired else { break }
            let advanced = try stopWatch.dispatcher.perform(.advance)
            let cycle = try #require(advanced.cycle)
            told.append((cycle.phase, cycle.current.label, try #require(advanced.latestTransition)))
            #expect(advanced.latestTransitionBoot == told.last?.start)
        }
        #expect(told.map { $0.phase } == [1, 2, 3])
        #expect(told.map { $0.label } == ["break", "focus", "break"])
        #expect(told.map { $0.start } == [.seconds(2500), .seconds(2800), .seconds(4300)])
        let running = stopWatch.state.current
        #expect(running.cycle?.phase == 3 && running.cycle?.round == 1)
        #expect(running.state == .counting(.seconds(100)))
        #expect(running.origin == .seconds(4300))
        #expect(running.expiry == .seconds(4600))
        #expect(!running.hasExpired)
    }

    @Test("a manual cycle runs on in overtime: advance does nothing, and Next starts the next phase now")
    func manualCycleInOvertime() throws {
        var snapshot = try StopWatchSnapshot.stopped.applying(.startCycle(Self.workRest(auto: false)), at: .seconds(100))
        #expect(snapshot.expiry == .seconds(110))
        let expired = try snapshot.applying(.expire, at: .seconds(110))
        #expect(expired.hasExpired)
        #expect(try expired.applying(.advance, at: .seconds(110)) == expired)
        #expect(try expired.applying(.advance, at: .seconds(125)) == expired)
        #expect(expired.elapsed(at: .seconds(140)) == .seconds(40), "past its 10 s target")
        #expect(expired.cycle?.phase == 0)
        snapshot = try expired.applying(.next, at: .seconds(140))
        #expect(snapshot.cycle?.phase == 1)
        #expect(snapshot.cycle?.current.label == "rest")
        #expect(snapshot.origin == .seconds(140), "from now, not from the expiry")
        #expect(snapshot.state == .counting(.zero))
        #expect(snapshot.target == .seconds(5))
        #expect(!snapshot.hasExpired)
        #expect(snapshot.expiry == .seconds(145))
        // The last phase of the only round: it expires and stays, Next has nowhere to go.
        let last = try snapshot.applying(.expire, at: .seconds(150))
        #expect(last.hasExpired)
        #expect(try last.applying(.advance, at: .seconds(150)) == last)
        #expect(throws: InvalidTransition(command: .next, snapshot: last)) { try last.applying(.next, at: .seconds(151)) }
    }

    @Test("Next moves a cycle on from any state, counting; from the last phase of a round to the first of the next")
    func nextFromAnyState() throws {
        let counting = try StopWatchSnapshot.stopped.applying(.startCycle(Self.workRest(rounds: 2, auto: true)), at: .seconds(0))
        let paused = try counting.applying(.stop, at: .seconds(3))
        let stopped = try paused.applying(.reset, at: .seconds(4))
        for before in [counting, paused, stopped] {
            let after = try before.applying(.next, at: .seconds(7))
            #expect(after.cycle?.phase == 1 && after.cycle?.round == 1)
            #expect(after == .counting(since: .seconds(7), now: .seconds(7), target: .seconds(5)).restoring(cycle: after.cycle, snooze: nil))
        }
        let secondRound = try counting.applying(.next, at: .seconds(1)).applying(.next, at: .seconds(2))
        #expect(secondRound.cycle?.phase == 0 && secondRound.cycle?.round == 2)
        #expect(secondRound.target == .seconds(10))
        #expect(secondRound.origin == .seconds(2))
    }

    @Test("an endless cycle goes round and round: Next and advance never refuse")
    func endlessCycle() throws {
        var snapshot = try StopWatchSnapshot.stopped.applying(.startCycle(Self.workRest(rounds: nil, auto: true)), at: .zero)
        var now = Duration.zero
        for step in 1...20 {
            now = try #require(snapshot.expiry)
            snapshot = try snapshot.applying(.expire, at: now).applying(.advance, at: now)
            #expect(snapshot.cycle?.round == step / 2 + 1)
            #expect(snapshot.cycle?.phase == step % 2)
            #expect(snapshot.origin == now)
        }
        #expect(now == .seconds(10 * 15))
        #expect(try snapshot.applying(.next, at: now + .seconds(1)).cycle?.round == 11)
    }

    @Test("snooze twice: each time the target is the elapsed time plus the snooze; Restart and Reset go back to the original target")
    func snoozeTwice() throws {
        let counting = try StopWatchSnapshot.stopped.applying(.countdown(.seconds(300)), at: .seconds(1000))
        let expired = try counting.applying(.expire, at: .seconds(1300))
        let once = try expired.applying(.snooze(by: .seconds(60)), at: .seconds(1310))
        #expect(once.target == .seconds(370), "310 s elapsed, plus 60")
        #expect(once.snooze == StopWatchSnooze(count: 1, originalTarget: .seconds(300)))
        #expect(!once.hasExpired)
        #expect(once.expiry == .seconds(1370))
        #expect(once.origin == counting.origin, "the same count goes on")
        #expect(once.state == .counting(.seconds(310)))
        #expect(try once.applying(.expire, at: .milliseconds(1_369_999)) == once, "not before its new end")
        let expiredAgain = try once.applying(.expire, at: .seconds(1370))
        #expect(expiredAgain.hasExpired)
        #expect(expiredAgain.snooze == once.snooze)
        let twice = try expiredAgain.applying(.snooze(by: .seconds(120)), at: .seconds(1400))
        #expect(twice.target == .seconds(520))
        #expect(twice.snooze == StopWatchSnooze(count: 2, originalTarget: .seconds(300)))
        #expect(twice.expiry == .seconds(1520))
        // Stop and start keep the snoozes.
        let paused = try twice.applying(.stop, at: .seconds(1410))
        #expect(paused.snooze == twice.snooze && paused.target == .seconds(520))
        let resumed = try paused.applying(.start, at: .seconds(1420))
        #expect(resumed.snooze == twice.snooze && resumed.expiry == .seconds(1530))
        // Restart: the countdown it was, from zero, now.
        let restarted = try resumed.applying(.restart, at: .seconds(1500))
        #expect(restarted == .counting(since: .seconds(1500), now: .seconds(1500), target: .seconds(300)))
        #expect(restarted.snooze == nil)
        // Reset: the same.
        let reset = try paused.applying(.reset, at: .seconds(1500))
        #expect(reset == .stopped(target: .seconds(300)))
        #expect(reset.snooze == nil)
        #expect(try reset.applying(.start, at: .seconds(1600)).expiry == .seconds(1900))
    }

    @Test("a snoozed phase: Restart and Reset take the cycle back to its first phase, unsnoozed; advance forgets the snooze")
    func snoozedPhase() throws {
        let cycle = Self.workRest(rounds: 2, auto: true)
        var snapshot = try StopWatchSnapshot.stopped.applying(.startCycle(cycle), at: .zero)
        snapshot = try snapshot.applying(.next, at: .seconds(1)).applying(.next, at: .seconds(2)).applying(.next, at: .seconds(3))
        #expect(snapshot.cycle?.isLast == true)
        let snoozed = try snapshot.applying(.expire, at: .seconds(8)).applying(.snooze(by: .seconds(30)), at: .seconds(9))
        #expect(snoozed.target == .seconds(36))
        #expect(snoozed.snooze == StopWatchSnooze(count: 1, originalTarget: .seconds(5)))
        #expect(snoozed.cycle == snapshot.cycle)
        let restarted = try snoozed.applying(.restart, at: .seconds(20))
        #expect(restarted.cycle == cycle)
        #expect(restarted.target == .seconds(10) && restarted.snooze == nil && restarted.origin == .seconds(20))
        let reset = try snoozed.applying(.stop, at: .seconds(21)).applying(.reset, at: .seconds(21))
        #expect(reset == StopWatchSnapshot.stopped(target: .seconds(10)).restoring(cycle: cycle, snooze: nil))
        // In an automatic cycle, a snoozed phase that is not the last goes on where its
        // snoozed end fell.
        let first = try StopWatchSnapshot.stopped.applying(.startCycle(cycle), at: .zero)
        let firstSnoozed = try first.applying(.expire, at: .seconds(10)).applying(.snooze(by: .seconds(5)), at: .seconds(12))
        #expect(firstSnoozed.expiry == .seconds(17))
        let advanced = try firstSnoozed.applying(.expire, at: .seconds(18)).applying(.advance, at: .seconds(18))
        #expect(advanced.cycle?.phase == 1)
        #expect(advanced.origin == .seconds(17))
        #expect(advanced.snooze == nil && advanced.target == .seconds(5))
    }

    @Test("Restart mid-cycle: back to phase 0 of round 1, counting from zero now, whatever the state")
    func restartMidCycle() throws {
        let time = ManualTime(now: .seconds(50))
        let stopWatch = StopWatchUseCase(clock: time, timers: time, tick: .seconds(1))
        _ = try stopWatch.dispatcher.perform(.startCycle(Self.pomodoro()))
        for _ in 0..<10 { _ = try stopWatch.dispatcher.perform(.next) }
        time.move(by: .seconds(100))
        let midway = try stopWatch.dispatcher.perform(.lap)
        #expect(midway.cycle?.phase == 2 && midway.cycle?.round == 2)
        #expect(midway.laps == [.seconds(100)])
        time.move(by: .seconds(7))
        let restarted = try stopWatch.dispatcher.perform(.restart)
        #expect(restarted.cycle == Self.pomodoro())
        #expect(restarted.state == .counting(.zero))
        #expect(restarted.origin == .seconds(157))
        #expect(restarted.laps.isEmpty)
        #expect(restarted.target == .seconds(1500))
        #expect(restarted.expiry == .seconds(1657))
        // From paused and stopped too.
        for _ in 0..<3 { _ = try stopWatch.dispatcher.perform(.next) }
        time.move(by: .seconds(3))
        let paused = try stopWatch.dispatcher.perform(.stop)
        #expect(paused.cycle?.phase == 3)
        #expect(try paused.applying(.restart, at: .seconds(200)) == StopWatchSnapshot.counting(since: .seconds(200), now: .seconds(200), target: .seconds(1500)).restoring(cycle: Self.pomodoro(), snooze: nil))
        let stopped = try paused.applying(.reset, at: .seconds(200))
        #expect(stopped.cycle == Self.pomodoro())
        #expect(try stopped.applying(.restart, at: .seconds(200)).cycle == Self.pomodoro())
    }

    static let plain: [StopWatchSnapshot] = [
        .stopped, .counting(since: .seconds(90), laps: [.seconds(2)], now: .seconds(100)), .paused(at: .seconds(4), laps: [.seconds(1)]),
    ]

    static let plainCountdowns: [StopWatchSnapshot] = [
        .stopped(target: .seconds(5)), .counting(since: .seconds(99), now: .seconds(100), target: .seconds(5)),
        .counting(since: .seconds(90), now: .seconds(100), target: .seconds(5), hasExpired: true),
        .paused(at: .seconds(7), target: .seconds(5), hasExpired: true),
    ]

    /// `command` on `before` is refused with `before` itself, and a use case holding
    /// `before` still holds it after.
    static func expectRefused(_ command: StopWatchCommand, on before: StopWatchSnapshot, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(throws: InvalidTransition(command: command, snapshot: before), sourceLocation: sourceLocation) {
            try before.applying(command, at: .seconds(100))
        }
        let time = ManualTime(now: .seconds(100))
        let stopWatch = StopWatchUseCase(before, clock: time, timers: time, tick: .seconds(1))
        #expect(throws: InvalidTransition.self, sourceLocation: sourceLocation) { try stopWatch.dispatcher.perform(command) }
        #expect(stopWatch.state.current == before, "nothing changed", sourceLocation: sourceLocation)
    }

    @Test("Next without a cycle, or in the last phase of the last round: refused, nothing changed")
    func nextRefused() throws {
        for before in Self.plain + Self.plainCountdowns { Self.expectRefused(.next, on: before) }
        let last = try StopWatchSnapshot.stopped.applying(.startCycle(Self.workRest(rounds: 1, auto: true)), at: .seconds(90))
            .applying(.next, at: .seconds(91))
        #expect(last.cycle?.isLast == true)
        Self.expectRefused(.next, on: last)
        Self.expectRefused(.next, on: try last.applying(.expire, at: .seconds(100)))
        Self.expectRefused(.next, on: try last.applying(.stop, at: .seconds(92)))
    }

    @Test("Snooze on a countdown not expired, not counting, or a plain stopwatch: refused, nothing changed")
    func snoozeRefused() throws {
        let snooze = StopWatchCommand.snooze(by: .seconds(300))
        for before in Self.plain { Self.expectRefused(snooze, on: before) }
        // Counting, not expired; expired but paused; stopped.
        Self.expectRefused(snooze, on: Self.plainCountdowns[1])
        Self.expectRefused(snooze, on: Self.plainCountdowns[3])
        Self.expectRefused(snooze, on: Self.plainCountdowns[0])
        // A cycle's phase that has not expired.
        Self.expectRefused(snooze, on: try StopWatchSnapshot.stopped.applying(.startCycle(Self.pomodoro()), at: .seconds(90)))
        // The one it accepts.
        #expect(try Self.plainCountdowns[2].applying(snooze, at: .seconds(100)).snooze?.count == 1)
    }

    @Test("Restart on a plain stopwatch, in any state: refused, nothing changed")
    func restartRefused() {
        for before in Self.plain { Self.expectRefused(.restart, on: before) }
    }

    @Test("SetTarget and Countdown end a cycle; start, stop, lap and the clock's switch keep it; Reset takes it back to its start")
    func whatEndsACycle() throws {
        let started = try StopWatchSnapshot.stopped.applying(.startCycle(Self.pomodoro()), at: .seconds(0))
        let third = try started.applying(.next, at: .seconds(1)).applying(.next, at: .seconds(2))
        let cycle = try #require(third.cycle)
        #expect(cycle.phase == 2)
        let retargeted = try third.applying(.setTarget(.seconds(60)), at: .seconds(3))
        #expect(retargeted.cycle == nil && retargeted.target == .seconds(60) && retargeted.origin == third.origin)
        #expect(try third.applying(.setTarget(nil), at: .seconds(3)).cycle == nil)
        let countdown = try third.applying(.countdown(.seconds(60)), at: .seconds(3))
        #expect(countdown.cycle == nil && countdown == .counting(since: .seconds(3), now: .seconds(3), target: .seconds(60)))
        // Kept through these, at the same phase.
        var kept = try third.applying(.lap, at: .seconds(4))
        #expect(kept.cycle == cycle)
        kept = try kept.applying(.stop, at: .seconds(5))
        #expect(kept.cycle == cycle && kept.target == .seconds(1500))
        kept = try kept.applying(.start, at: .seconds(9))
        #expect(kept.cycle == cycle && kept.expiry == .seconds(1506), "3 s counted before the stop")
        kept = try kept.applying(.setCountsSleep(false), at: .seconds(10))
        #expect(kept.cycle == cycle && !kept.countsSleep)
        kept = try kept.applying(.toggle, at: .seconds(11))
        let reset = try kept.applying(.reset, at: .seconds(12))
        #expect(reset.state == .stopped && reset.cycle == cycle.fromTheStart && reset.target == .seconds(1500))
        #expect(!reset.countsSleep)
        // A new cycle replaces the old one from its start.
        let other = Self.workRest(auto: false)
        let replaced = try third.applying(.startCycle(other), at: .seconds(20))
        #expect(replaced.cycle == other && replaced.origin == .seconds(20) && replaced.target == .seconds(10))
    }

    @Test("a cycle on the awake clock: a suspend does not count, each phase still begins at the instant the one before expired")
    func awakeClockCycle() throws {
        let time = ManualTime(now: .seconds(1000))
        let stopWatch = StopWatchUseCase(clock: time, timers: time, tick: .seconds(1))
        _ = try stopWatch.dispatcher.perform(.setCountsSleep(false))
        let started = try stopWatch.dispatcher.perform(.startCycle(Self.pomodoro()))
        #expect(!started.countsSleep)
        #expect(started.expiry == .seconds(2500), "on the awake clock, which reads the boot clock's time until a suspend")
        time.advance(by: .seconds(20 * 60))
        time.suspend(for: .seconds(3600))
        // An hour asleep, and only 20 minutes counted: not due.
        #expect(time.awakeNow() == .seconds(2200))
        #expect(try stopWatch.dispatcher.perform(.expire).hasExpired == false)
        #expect(stopWatch.state.current.elapsed(at: time.instant()) == .seconds(1200))
        // Noticed 2 s late: the break counts from the focus's end all the same.
        time.move(by: .seconds(302))
        #expect(try stopWatch.dispatcher.perform(.expire).hasExpired)
        let breakPhase = try stopWatch.dispatcher.perform(.advance)
        #expect(breakPhase.cycle?.phase == 1)
        #expect(!breakPhase.countsSleep)
        #expect(breakPhase.origin == .seconds(2500), "the awake clock's reading at the expiry")
        #expect(breakPhase.latestTransitionBoot == .seconds(6100), "the boot clock's reading then")
        #expect(breakPhase.elapsed(at: time.instant()) == .seconds(2))
        #expect(breakPhase.expiry == .seconds(2800))
        time.suspend(for: .seconds(600))
        #expect(stopWatch.state.current.elapsed(at: time.instant()) == .seconds(2), "the sleep is not counted")
    }
}
