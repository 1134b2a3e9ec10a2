import LinuxSystem
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
        // Each tick's elapsed time, and the clock's elapsed time when it was delivered.
        let ticks = Locked<[(published: Duration, delivered: Duration)]>([])
        let origin = Later<Duration>()
        let enough = DispatchSemaphore(value: 0)
        let subscription = stopWatch.state.sink(on: DispatchQueue(label: "ticks")) { snapshot in
            guard case .counting(let elapsed) = snapshot.state, elapsed > .zero else { return }
            let count = ticks.withLock {
                $0.append((elapsed, clock.now() - origin.value))
                return $0.count
            }
            if count == 5 { enough.signal() }
        }
        defer { subscription.cancel() }
        origin.set(try #require(try stopWatch.dispatcher.perform(.start).origin))

        #expect(enough.wait(timeout: .now() + 30) == .success)
        let paused = try stopWatch.dispatcher.perform(.stop)
        let received = ticks.withLock { $0 }
        for (index, sample) in received.prefix(5).enumerated() {
            // The n-th tick comes no earlier than the n-th boundary …
            #expect(sample.published >= tick * (index + 1))
            // … and reports the clock at the time it fired, not a count of ticks.
            #expect(sample.delivered >= sample.published)
            #expect(sample.delivered - sample.published < .seconds(2))
        }
        #expect(zip(received, received.dropFirst()).allSatisfy { $0.published < $1.published })
        #expect(paused.state.elapsed >= received.last?.published ?? .zero)
        #expect(paused.state.elapsed <= clock.now() - origin.value)
    }

    @Test("BootClock advances at the monotonic clock's rate")
    func bootClockAdvances() {
        let clock = BootClock()
        let bootStart = clock.now()
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .milliseconds(20) {}
        let bootElapsed = clock.now() - bootStart
        let monotonicElapsed = ContinuousClock.now - start
        #expect(bootElapsed >= .milliseconds(20))
        // Read one after the other, the two differ by scheduling at most.
        #expect(abs((bootElapsed - monotonicElapsed).nanoseconds) < 5_000_000)
    }

    @Test("a dropped stopwatch, counting with a real timer, is freed")
    func droppedStopWatchIsFreed() throws {
        weak var weakStopWatch: StopWatchUseCase?
        try {
            let stopWatch = StopWatchUseCase(tick: .milliseconds(10))
            weakStopWatch = stopWatch
            try stopWatch.dispatcher.perform(.start)
        }()
        // Its queue may still be finishing a tick: wait for the last reference to go.
        let deadline = ContinuousClock.now + .seconds(10)
        while weakStopWatch != nil, ContinuousClock.now < deadline {}
        #expect(weakStopWatch == nil)
    }
}
