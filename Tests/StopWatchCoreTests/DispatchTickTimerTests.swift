import Dispatch
import StopWatchCore
import StopWatchTesting
import Testing

/// The production clock and timer, for real. Tolerances are wide on purpose: this runs on
/// loaded 2-core machines; the benchmark measures precision.
@Suite("StopWatch with the real clock and DispatchSourceTimer")
struct DispatchTickTimerTests {
    @Test("ticks arrive at or after each boundary, in order, with elapsed from the clock")
    func realTicks() throws {
        let tick = Duration.milliseconds(20)
        let clock = BootClock()
        let stopWatch = StopWatchUseCase(clock: clock, timers: DispatchTickTimerFactory(), tick: tick)
        let recorder = StateRecorder(stopWatch.state)
        let started = try stopWatch.dispatcher.perform(.start)
        let origin = try #require(started.origin)

        #expect(recorder.wait(timeout: .seconds(30)) { $0.count >= 7 })
        let paused = try stopWatch.dispatcher.perform(.stop)

        let ticks = recorder.states.prefix(7).dropFirst(2).map(\.state.elapsed)
        var previousBoundary = Duration.zero
        for elapsed in ticks {
            // Each tick reports the elapsed time just after a boundary it crossed …
            let boundary = tick * Int(elapsed.nanoseconds / tick.nanoseconds)
            #expect(boundary > previousBoundary)
            #expect(elapsed - boundary < .milliseconds(500))
            previousBoundary = boundary
        }
        // … and the pause freezes the clock's elapsed time, which no tick exceeded.
        #expect(paused.state.elapsed >= ticks.last ?? .zero)
        #expect(paused.state.elapsed <= clock.now() - origin)
    }

    @Test("BootClock is monotonic and agrees with the monotonic clock's rate")
    func bootClockAdvances() {
        let clock = BootClock()
        let first = clock.now()
        let start = ContinuousClock.now
        var second = clock.now()
        while ContinuousClock.now - start < .milliseconds(5) { second = clock.now() }
        #expect(second > first)
        #expect(second - first < .seconds(5))
    }
}
