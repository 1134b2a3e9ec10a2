import StopWatchCore
import StopWatchTesting
import Testing

/// Time driven by hand: exact, no sleeping.
@Suite("StopWatch timing, manual clock")
struct StopWatchTimingTests {
    let time = ManualTime(now: .seconds(100))

    func makeStopWatch(tick: Duration = .seconds(1)) -> (StopWatchUseCase, StateRecorder<StopWatchSnapshot>) {
        let stopWatch = StopWatchUseCase(clock: time, timers: time, tick: tick)
        return (stopWatch, StateRecorder(stopWatch.state))
    }

    @Test("ticks land on multiples of the interval, each publishing the exact elapsed time")
    func ticksOnMultiples() throws {
        let (stopWatch, recorder) = makeStopWatch()
        try stopWatch.dispatcher.perform(.start)
        time.advance(by: .milliseconds(3500))
        #expect(recorder.wait(forLast: .counting(since: .seconds(100), now: .seconds(103))))
        #expect(recorder.states.map(\.state) == [
            .stopped, .counting(.zero), .counting(.seconds(1)), .counting(.seconds(2)), .counting(.seconds(3)),
        ])
        #expect(time.liveTimers.first?.deadline == .seconds(104))
        #expect(stopWatch.state.current.elapsed(at: time.now()) == .milliseconds(3500))
    }

    @Test("a sub-second tick interval: boundaries at each multiple of it", arguments: [
        Duration.milliseconds(10), .milliseconds(250), .milliseconds(333),
    ])
    func shortTicks(interval: Duration) throws {
        let (stopWatch, recorder) = makeStopWatch(tick: interval)
        try stopWatch.dispatcher.perform(.start)
        time.advance(by: interval * 5)
        #expect(recorder.wait { $0.count == 7 })
        #expect(recorder.states.dropFirst().map(\.state) == (0...5).map { .counting(interval * $0) })
    }

    @Test("a tick delivered late publishes the true elapsed time and the next one keeps the grid")
    func lateTick() throws {
        let (stopWatch, recorder) = makeStopWatch()
        try stopWatch.dispatcher.perform(.start)
        time.move(by: .milliseconds(1500))   // the 1 s tick is half a second late
        time.fireDueTimers()
        #expect(recorder.wait { $0.last?.state == .counting(.milliseconds(1500)) })
        #expect(time.liveTimers.first?.deadline == .seconds(102))
        time.advance(by: .milliseconds(500))
        #expect(recorder.wait { $0.last?.state == .counting(.seconds(2)) })
    }

    @Test("skipped ticks do not change elapsed: one late tick catches up, then the grid resumes")
    func skippedTicks() throws {
        let (stopWatch, recorder) = makeStopWatch()
        try stopWatch.dispatcher.perform(.start)
        time.move(by: .milliseconds(3200))   // ticks at 1, 2 and 3 s never came
        #expect(stopWatch.state.current.elapsed(at: time.now()) == .milliseconds(3200))
        time.fireDueTimers()
        #expect(recorder.wait { $0.last?.state == .counting(.milliseconds(3200)) })
        #expect(time.timers.first?.fireCount == 1)
        #expect(time.liveTimers.first?.deadline == .seconds(104))
        let paused = try stopWatch.dispatcher.perform(.stop)
        #expect(paused.state == .pause(.milliseconds(3200)))
    }

    @Test("pause and resume across partial intervals keep the exact elapsed time")
    func pauseResumeAcrossPartialIntervals() throws {
        let (stopWatch, recorder) = makeStopWatch()
        try stopWatch.dispatcher.perform(.start)
        time.advance(by: .milliseconds(400))
        #expect(try stopWatch.dispatcher.perform(.stop).state == .pause(.milliseconds(400)))
        time.advance(by: .seconds(3600))   // paused for an hour: nothing counts, nothing fires
        #expect(time.liveTimers.isEmpty)
        #expect(time.timersMade == 1)

        #expect(try stopWatch.dispatcher.perform(.start).state == .counting(.milliseconds(400)))
        #expect(time.liveTimers.first?.deadline == time.now() + .milliseconds(600))
        time.advance(by: .milliseconds(600))
        #expect(recorder.wait { $0.last?.state == .counting(.seconds(1)) })
        time.advance(by: .milliseconds(300))
        #expect(try stopWatch.dispatcher.perform(.toggle).state == .pause(.milliseconds(1300)))
        time.advance(by: .milliseconds(50))
        #expect(try stopWatch.dispatcher.perform(.toggle).state == .counting(.milliseconds(1300)))
        time.advance(by: .milliseconds(700))
        #expect(recorder.wait { $0.last?.state == .counting(.seconds(2)) })
        #expect(try stopWatch.dispatcher.perform(.stop).state == .pause(.seconds(2)))
    }

    @Test("no timer is scheduled while stopped or paused")
    func noTimerUnlessCounting() throws {
        let (stopWatch, _) = makeStopWatch()
        #expect(time.timersMade == 0)
        try stopWatch.dispatcher.perform(.start)
        #expect(time.liveTimers.count == 1)
        try stopWatch.dispatcher.perform(.start)   // no-op: still one timer
        try stopWatch.dispatcher.perform(.lap)
        #expect(time.timersMade == 1)
        try stopWatch.dispatcher.perform(.stop)
        #expect(time.liveTimers.isEmpty)
        try stopWatch.dispatcher.perform(.reset)
        #expect(time.liveTimers.isEmpty)
        try stopWatch.dispatcher.perform(.toggle)
        #expect(time.liveTimers.count == 1)
        try stopWatch.dispatcher.perform(.toggle)
        #expect(time.liveTimers.isEmpty)
        #expect(time.timersMade == 2)
    }

    @Test("nobody watching, nothing ticks: the timer follows the watchers, elapsed stays exact")
    func timerFollowsWatchers() throws {
        let stopWatch = StopWatchUseCase(clock: time, timers: time, tick: .seconds(1))
        try stopWatch.dispatcher.perform(.start)
        #expect(time.liveTimers.isEmpty)
        time.advance(by: .milliseconds(2500))
        #expect(time.timersMade == 0)
        #expect(try stopWatch.dispatcher.perform(.lap).laps == [.milliseconds(2500)])

        // A watcher arrives: the timer is armed for the next boundary of the same grid.
        let watcher = StateRecorder(stopWatch.state)
        try stopWatch.dispatcher.perform(.start)   // a no-op that waits for the queue to settle
        #expect(time.liveTimers.first?.deadline == .seconds(103))
        time.advance(by: .milliseconds(500))
        #expect(watcher.wait { $0.last?.state == .counting(.seconds(3)) })

        // It leaves: the timer goes; counting goes on.
        watcher.cancel()
        try stopWatch.dispatcher.perform(.start)
        #expect(time.liveTimers.isEmpty)
        time.advance(by: .seconds(7))
        #expect(stopWatch.state.current.elapsed(at: time.now()) == .seconds(10))
        #expect(try stopWatch.dispatcher.perform(.stop).state == .pause(.seconds(10)))
    }

    @Test("a stopwatch restored while counting arms its timer and goes on from its origin")
    func restoredCounting() throws {
        let restored = StopWatchSnapshot.counting(since: .seconds(40), laps: [.seconds(5)], now: time.now())
        let stopWatch = StopWatchUseCase(restored, clock: time, timers: time)
        let watcher = StateRecorder(stopWatch.state)
        #expect(watcher.wait(forLast: restored))
        try stopWatch.dispatcher.perform(.start)   // a no-op that waits for the queue to settle
        #expect(stopWatch.state.current.state == .counting(.seconds(60)))
        #expect(time.liveTimers.first?.deadline == .seconds(101))
        time.advance(by: .seconds(1))
        #expect(stopWatch.state.current.state == .counting(.seconds(61)))
        #expect(stopWatch.state.current.laps == [.seconds(5)])
    }
}
