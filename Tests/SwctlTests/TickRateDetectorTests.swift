import StopwatchProtocol
import Testing
@testable import swctl

@Suite("tenths in swctl watch")
struct TickRateDetectorTests {
    static func counting(_ elapsedMs: Int64, laps: [Int64] = []) -> Stopwatch {
        Stopwatch(name: "w", state: .counting, elapsedMs: elapsedMs, lapsMs: laps)
    }

    func detector(after updates: [Stopwatch]) -> TickRateDetector {
        var detector = TickRateDetector()
        updates.forEach { detector.observe($0) }
        return detector
    }

    @Test("a 1 s tick never shows tenths: not after a first reply mid-second, not after a lap")
    func secondTicks() {
        // Watch begins at 2.7 s; ticks at 3, 4, 5 s (a few ms late); a lap at 5.5 s; ticks on.
        let updates = [
            Self.counting(2_700), Self.counting(3_004), Self.counting(4_001), Self.counting(5_002),
            Self.counting(5_500, laps: [5_500]), Self.counting(6_001, laps: [5_500]), Self.counting(7_003, laps: [5_500]),
        ]
        #expect(!detector(after: updates).showsTenths)
    }

    @Test("a 1 s tick with one late delivery (then an on-time one) shows no tenths")
    func lateDelivery() {
        let updates = [Self.counting(1_001), Self.counting(2_150), Self.counting(3_001), Self.counting(4_002)]
        #expect(!detector(after: updates).showsTenths)
    }

    @Test("a 100 ms tick shows tenths from the second tick after the first reply")
    func fastTicks() {
        var detector = TickRateDetector()
        detector.observe(Self.counting(1_234))
        detector.observe(Self.counting(1_300))
        #expect(!detector.showsTenths)
        detector.observe(Self.counting(1_400))
        #expect(detector.showsTenths)
        // And stays: a pause does not take them away again.
        detector.observe(Stopwatch(name: "w", state: .pause, elapsedMs: 1_450))
        #expect(detector.showsTenths)
    }

    @Test("state changes and reconnects break the run of short gaps")
    func brokenRuns() {
        var detector = TickRateDetector()
        detector.observe(Self.counting(1_000))
        detector.observe(Self.counting(1_500))
        detector.streamRestarted()
        detector.observe(Self.counting(1_800))
        #expect(!detector.showsTenths)
        detector.observe(Stopwatch(name: "w", state: .pause, elapsedMs: 1_900))
        detector.observe(Self.counting(1_900))
        detector.observe(Self.counting(2_000))
        #expect(!detector.showsTenths)
    }

    @Test("STOPWATCHD_TICK under a second shows tenths from the start")
    func toldUpFront() {
        #expect(TickRateDetector(showsTenths: true).showsTenths)
    }
}

@Suite("numbers a daemon sends never trap the client")
struct HostileReplyTests {
    @Test("elapsed times whose difference overflows: no trap, and no tenths from them")
    func overflowingElapsed() {
        var detector = TickRateDetector()
        for elapsed in [Int64.min, .max, .min, .max, -1, .max] {
            detector.observe(TickRateDetectorTests.counting(elapsed))
        }
        #expect(!detector.showsTenths)
    }

    @Test("laps whose differences overflow are printed, not trapped on")
    func overflowingLaps() {
        let stopwatch = Stopwatch(name: "w", state: .counting, elapsedMs: .max, lapsMs: [.min, .max, .min, 0])
        let lines = StatusText.lines(for: stopwatch, tenths: true)
        #expect(lines.count == 5)
        #expect(lines[2].hasSuffix("(+0:00:00.0)"))
    }
}
