import Dispatch
import LinuxSystem
import StopWatchCore
import StopWatchTesting
import Testing

/// Start, stop and toggle dated in the past (`transition(_:ago:note:)`), and notes.
@Suite("StopWatch transitions at an earlier instant")
struct StopWatchEarlierInstantTests {
    static let now: Duration = .seconds(1000)

    @Test("a start 10 minutes ago reads 10 minutes now")
    func startInThePast() throws {
        let started = try StopWatchSnapshot.stopped.applying(.transition(.start, ago: .seconds(600), note: nil), at: Self.now)
        #expect(started.state == .counting(.seconds(600)))
        #expect(started.elapsed(at: Self.now + .seconds(5)) == .seconds(605))
        #expect(started.intervalElapsed(at: Self.now) == .seconds(600))
        #expect(started.latestTransition == Self.now - .seconds(600))
    }

    @Test("a resume in the past adds the time since then to the paused time")
    func resumeInThePast() throws {
        let paused = StopWatchSnapshot.paused(at: .seconds(30), latestTransition: .seconds(100))
        let resumed = try paused.applying(.transition(.toggle, ago: .seconds(60), note: nil), at: Self.now)
        #expect(resumed.state == .counting(.seconds(90)))
        #expect(resumed.intervalElapsed(at: Self.now) == .seconds(60))
    }

    @Test("a stop in the past ends the interval then and takes off the time since")
    func stopInThePast() throws {
        let counting = StopWatchSnapshot.counting(since: .seconds(400), now: Self.now)
        let stopped = try counting.applying(.transition(.stop, ago: .seconds(100), note: nil), at: Self.now)
        #expect(stopped.state == .pause(.seconds(500)))
        #expect(stopped.elapsed(at: Self.now + .seconds(50)) == .seconds(500))
        #expect(counting.endsInterval(goingTo: stopped))
        #expect(stopped.latestTransition == Self.now - .seconds(100))
    }

    @Test("a stop before the latest lap is refused, with how far back it may be")
    func stopBeforeLapRefused() throws {
        // Counting since 400, a lap at elapsed 550 (clock 950).
        let counting = StopWatchSnapshot.counting(since: .seconds(400), laps: [.seconds(550)], now: Self.now)
        let command = StopWatchCommand.transition(.stop, ago: .seconds(60), note: nil)
        #expect(throws: InvalidTransition(command: command, snapshot: counting, earliestAgo: .seconds(50))) {
            try counting.applying(command, at: Self.now)
        }
        // At the lap itself: allowed.
        let stopped = try counting.applying(.transition(.stop, ago: .seconds(50), note: nil), at: Self.now)
        #expect(stopped.state == .pause(.seconds(550)))
    }

    @Test("a stop before the counting interval's start is refused")
    func stopBeforeIntervalStartRefused() throws {
        let started = try StopWatchSnapshot.paused(at: .seconds(30)).applying(.start, at: .seconds(900))
        let command = StopWatchCommand.transition(.toggle, ago: .seconds(101), note: nil)
        #expect(throws: InvalidTransition(command: command, snapshot: started, earliestAgo: .seconds(100))) {
            try started.applying(command, at: Self.now)
        }
        // Restored from a file that did not keep the latest transition: the interval's start
        // (elapsed 30 s into a count whose origin is at 870) still bounds it.
        let restored = StopWatchSnapshot.counting(since: .seconds(870), now: Self.now, intervalStart: .seconds(30))
        #expect(throws: InvalidTransition(command: command, snapshot: restored, earliestAgo: .seconds(100))) {
            try restored.applying(command, at: Self.now)
        }
    }

    @Test("a start before the latest transition is refused")
    func startBeforeLatestTransitionRefused() throws {
        let counting = StopWatchSnapshot.counting(since: .seconds(400), now: Self.now)
        let stopped = try counting.applying(.transition(.stop, ago: .seconds(100), note: nil), at: Self.now)
        let command = StopWatchCommand.transition(.start, ago: .seconds(200), note: nil)
        #expect(throws: InvalidTransition(command: command, snapshot: stopped, earliestAgo: .seconds(100))) {
            try stopped.applying(command, at: Self.now)
        }
    }

    @Test("a start while counting and a stop while paused change nothing, whenever dated")
    func noOpsStayNoOps() throws {
        let counting = StopWatchSnapshot.counting(since: .seconds(400), now: Self.now)
        #expect(try counting.applying(.transition(.start, ago: .seconds(9999), note: "x"), at: Self.now) == counting)
        let paused = StopWatchSnapshot.paused(at: .seconds(3), latestTransition: Self.now)
        #expect(try paused.applying(.transition(.stop, ago: .seconds(9999), note: nil), at: Self.now) == paused)
    }

    @Test("a countdown started in the past whose instant has passed is due at once")
    func countdownStartedInThePastIsDue() throws {
        let countdown = StopWatchSnapshot.stopped(target: .seconds(300))
        let started = try countdown.applying(.transition(.start, ago: .seconds(600), note: nil), at: Self.now)
        let expiry = try #require(started.expiry)
        #expect(expiry == Self.now - .seconds(300))
        let expired = try started.applying(.expire, at: Self.now)
        #expect(expired.hasExpired)
        #expect(expired.state == .counting(.seconds(600)))
    }

    @Test("an expiry already told stays told through a stop and a start in the past")
    func toldExpiryStaysTold() throws {
        let counting = StopWatchSnapshot.counting(since: .seconds(400), now: Self.now, target: .seconds(60), hasExpired: true)
        let stopped = try counting.applying(.transition(.stop, ago: .seconds(10), note: nil), at: Self.now)
        let resumed = try stopped.applying(.transition(.start, ago: .seconds(5), note: nil), at: Self.now)
        #expect(resumed.hasExpired)
        #expect(resumed.expiry == nil)
    }

    @Test("the note goes with the interval a start begins, and ends with it")
    func noteFollowsTheInterval() throws {
        let started = try StopWatchSnapshot.stopped.applying(.transition(.start, ago: .zero, note: "report"), at: Self.now)
        #expect(started.note == "report")
        let lapped = try started.applying(.lap, at: Self.now + .seconds(1))
        #expect(lapped.note == "report")
        let stopped = try lapped.applying(.stop, at: Self.now + .seconds(2))
        #expect(stopped.note == nil)
        let resumed = try stopped.applying(.start, at: Self.now + .seconds(3))
        #expect(resumed.state.isCounting)
        #expect(resumed.note == nil)
        let countdown = try started.applying(.countdown(.seconds(5)), at: Self.now + .seconds(4))
        #expect(countdown.note == nil)
    }

    @Test("the use case dates a start in the past from its own clock")
    func useCaseStartsInThePast() throws {
        let time = ManualTime(now: Self.now)
        let stopWatch = StopWatchUseCase(clock: time, timers: time)
        let started = try stopWatch.dispatcher.perform(.transition(.start, ago: .seconds(600), note: "n"))
        #expect(started.elapsed(at: time.instant()) == .seconds(600))
        #expect(started.note == "n")
    }
}

/// Stopwatches that leave sleep out (`countsSleep == false`), on `ManualTime`'s two clocks.
@Suite("StopWatch time in suspend")
struct StopWatchSleepTests {
    @Test("a stopwatch that skips sleep does not move across a suspend; one that counts it does")
    func sleepSkippedAcrossSuspend() throws {
        let time = ManualTime(now: .seconds(100))
        let skipping = StopWatchUseCase(clock: time, timers: time)
        let counting = StopWatchUseCase(clock: time, timers: time)
        _ = try skipping.dispatcher.perform(.setCountsSleep(false))
        _ = try skipping.dispatcher.perform(.start)
        _ = try counting.dispatcher.perform(.start)
        time.move(by: .seconds(10))
        time.suspend(for: .seconds(3600))
        time.move(by: .seconds(5))
        #expect(skipping.state.current.elapsed(at: time.instant()) == .seconds(15))
        #expect(counting.state.current.elapsed(at: time.instant()) == .seconds(3615))
        // Where its interval began on the boot clock: its wall-clock length includes the sleep.
        #expect(skipping.state.current.intervalStartBoot == .seconds(100))
        #expect(skipping.state.current.intervalElapsed(at: time.instant()) == .seconds(15))
        let stopped = try skipping.dispatcher.perform(.stop)
        #expect(stopped.state == .pause(.seconds(15)))
    }

    @Test("a watched stopwatch that skips sleep publishes no tick while suspended, and ticks on its grid of awake time after")
    func noTicksWhileSuspended() throws {
        let time = ManualTime(now: .seconds(100))
        let stopWatch = StopWatchUseCase(clock: time, timers: time)
        _ = try stopWatch.dispatcher.perform(.setCountsSleep(false))
        let recorder = StateRecorder(stopWatch.state)
        _ = try stopWatch.dispatcher.perform(.start)
        time.advance(by: .milliseconds(2500))
        #expect(recorder.wait { $0.last?.state == .counting(.seconds(2)) })
        let fired = time.timers.map(\.fireCount).reduce(0, +)
        time.suspend(for: .seconds(3600))
        #expect(time.timers.map(\.fireCount).reduce(0, +) == fired, "no tick fired in the suspend")
        #expect(stopWatch.state.current.elapsed(at: time.instant()) == .milliseconds(2500))
        time.advance(by: .milliseconds(500))
        #expect(recorder.wait { $0.last?.state == .counting(.seconds(3)) })
        #expect(recorder.states.map(\.state) == [
            .stopped, .counting(.zero), .counting(.seconds(1)), .counting(.seconds(2)), .counting(.seconds(3)),
        ])
    }

    @Test("skipping sleep: dated on the boot clock; a stop before the sleep since, a start after it, unless the sleep cannot lie there")
    func skipSleepDatedAcrossSuspend() throws {
        // Started at 100 s on both clocks; 100 s awake (to 200 s), 1000 s asleep, 50 s awake.
        let started = try StopWatchSnapshot.stopped.applying(.setCountsSleep(false), at: .seconds(100))
            .applying(.start, at: .seconds(100))
        let now = StopWatchInstant(boot: .seconds(1250), awake: .seconds(250))
        // "I stopped, then closed the lid": a stop 1100 s ago came 50 s after the start.
        let beforeSleep = try started.applying(.transition(.stop, ago: .seconds(1100), note: nil), at: now)
        #expect(beforeSleep.state == .pause(.seconds(50)))
        #expect(beforeSleep.pausedAtBoot == .seconds(150) && beforeSleep.pausedAt == .seconds(150))
        // 30 s ago the sleep cannot lie after it: after the wake, leaving out those 30 s.
        let afterWake = try started.applying(.transition(.stop, ago: .seconds(30), note: nil), at: now)
        #expect(afterWake.state == .pause(.seconds(120)))
        // Before its start on the boot clock: refused, 1150 s back at most.
        #expect(throws: InvalidTransition(command: .transition(.stop, ago: .seconds(1151), note: nil), snapshot: started, earliestAgo: .seconds(1150))) {
            try started.applying(.transition(.stop, ago: .seconds(1151), note: nil), at: now)
        }
        // "I slept, then started": 20 s ago counts 20 s.
        let resumed = try beforeSleep.applying(.transition(.start, ago: .seconds(20), note: nil), at: now)
        #expect(resumed.elapsed(at: now) == .seconds(70))
        #expect(resumed.intervalStartBoot == .seconds(1230))
        // 1080 s ago the sleep cannot lie before it: the 30 s before the sleep count, and the 50 s after.
        let resumedBeforeSleep = try beforeSleep.applying(.transition(.start, ago: .seconds(1080), note: nil), at: now)
        #expect(resumedBeforeSleep.elapsed(at: now) == .seconds(130))
        // Switched to the boot clock, the stop stays where the boot clock had it.
        let switched = try beforeSleep.applying(.setCountsSleep(true), at: now)
        #expect(switched.pausedAt == .seconds(150) && switched.latestTransition == .seconds(150))
    }

    @Test("switching clocks keeps the elapsed time, and only the new clock counts from then")
    func switchingKeepsElapsed() throws {
        let time = ManualTime(now: .seconds(100))
        let stopWatch = StopWatchUseCase(clock: time, timers: time)
        _ = try stopWatch.dispatcher.perform(.start)
        time.move(by: .seconds(20))
        time.suspend(for: .seconds(50))
        let switched = try stopWatch.dispatcher.perform(.setCountsSleep(false))
        #expect(!switched.countsSleep)
        #expect(switched.elapsed(at: time.instant()) == .seconds(70))
        #expect(switched.state == .counting(.seconds(70)))
        time.suspend(for: .seconds(1000))
        time.move(by: .seconds(3))
        #expect(stopWatch.state.current.elapsed(at: time.instant()) == .seconds(73))
        let back = try stopWatch.dispatcher.perform(.setCountsSleep(true))
        #expect(back.elapsed(at: time.instant()) == .seconds(73))
        time.suspend(for: .seconds(7))
        #expect(stopWatch.state.current.elapsed(at: time.instant()) == .seconds(80))
    }

    @Test("a switch of clocks while counting does not end the interval")
    func switchIsTheSameInterval() throws {
        let counting = StopWatchSnapshot.counting(since: .seconds(10), now: .seconds(30), intervalStart: .seconds(5))
        let instant = StopWatchInstant(boot: .seconds(30), awake: .seconds(12))
        let switched = try counting.applying(.setCountsSleep(false), at: instant)
        #expect(!counting.endsInterval(goingTo: switched))
        #expect(switched.intervalElapsed(at: instant) == .seconds(15))
        #expect(switched.origin == .seconds(-8))
        #expect(try counting.applying(.setCountsSleep(true), at: instant) == counting)
    }

    @Test("a countdown that skips sleep expires after its target of awake time")
    func countdownOfAwakeTime() throws {
        let time = ManualTime(now: .seconds(100))
        let stopWatch = StopWatchUseCase(clock: time, timers: time)
        _ = try stopWatch.dispatcher.perform(.setCountsSleep(false))
        let countdown = try stopWatch.dispatcher.perform(.countdown(.seconds(60)))
        #expect(countdown.expiry == time.awakeNow() + .seconds(60))
        time.move(by: .seconds(30))
        time.suspend(for: .seconds(600))
        #expect(try stopWatch.dispatcher.perform(.expire).hasExpired == false)
        time.move(by: .seconds(30))
        #expect(try stopWatch.dispatcher.perform(.expire).hasExpired)
    }

    @Test("ManualTime's awake timers keep their deadline through a suspend")
    func awakeTimersIgnoreSuspend() {
        let time = ManualTime(now: .seconds(100))
        let queue = DispatchQueue(label: "awake timer test")
        let fired = Locked(0)
        let timer = time.awakeTimers.makeTimer(on: queue) { _, _ in fired.withLock { $0 += 1 } }
        timer.schedule(at: time.awakeNow() + .seconds(60), now: time.awakeNow())
        time.suspend(for: .seconds(600))
        #expect(fired.withLock { $0 } == 0)
        time.advance(by: .seconds(59))
        #expect(fired.withLock { $0 } == 0)
        time.advance(by: .seconds(1))
        #expect(fired.withLock { $0 } == 1)
    }
}
