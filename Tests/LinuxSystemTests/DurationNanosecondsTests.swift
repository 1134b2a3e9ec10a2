import LinuxSystem
import Testing

/// `Duration.nanoseconds`, which every lap, origin and elapsed time written goes through.
@Suite("Duration in whole nanoseconds")
struct DurationNanosecondsTests {
    static let exact: [(Duration, Int64)] = [
        (.zero, 0),
        (.nanoseconds(1), 1),
        (.nanoseconds(-1), -1),
        (.milliseconds(1_234), 1_234_000_000),
        (.seconds(-3), -3_000_000_000),
        (.seconds(Int64(100 * 365.25 * 86_400)), 3_155_760_000_000_000_000),
        (.nanoseconds(Int64.max), .max),
        (.nanoseconds(Int64.min), .min),
    ]

    @Test("whole nanoseconds come back exactly", arguments: exact)
    func exactValues(duration: Duration, nanoseconds: Int64) {
        #expect(duration.nanoseconds == nanoseconds)
        #expect(duration.milliseconds == nanoseconds / 1_000_000)
    }

    @Test("a part of a nanosecond is dropped, toward zero")
    func towardZero() {
        #expect(Duration(secondsComponent: 1, attosecondsComponent: 999_999_999).nanoseconds == 1_000_000_000)
        #expect(Duration(secondsComponent: -1, attosecondsComponent: -500_000_000).nanoseconds == -1_000_000_000)
        #expect((Duration.nanoseconds(-3) / 2).nanoseconds == -1)
    }

    @Test("beyond ±292 years it saturates instead of trapping")
    func saturates() {
        #expect(Duration.seconds(Int64.max).nanoseconds == .max)
        #expect(Duration.seconds(Int64.min).nanoseconds == .min)
        #expect((Duration.nanoseconds(Int64.max) + .nanoseconds(1)).nanoseconds == .max)
    }

    @Test("whole milliseconds, on both sides of 7 days (where the short division stops)")
    func milliseconds() {
        var generator = SystemRandomNumberGenerator()
        let edges: [Duration] = [
            .zero, .nanoseconds(999_999), .nanoseconds(1_000_000), .milliseconds(1), .seconds(604_800), .seconds(604_801),
            // 2^79 attoseconds, and just below.
            Duration(secondsComponent: 604_462, attosecondsComponent: 909_807_314_587_353_088),
            Duration(secondsComponent: 604_462, attosecondsComponent: 909_807_314_587_353_087),
            .seconds(Int64(100 * 365.25 * 86_400)), .seconds(-1), .nanoseconds(-999_999), .seconds(Int64.max), .seconds(Int64.min),
        ]
        let random = (0..<2_000).map { _ in
            Duration(secondsComponent: Int64.random(in: -2_000_000...2_000_000, using: &generator), attosecondsComponent: Int64.random(in: 0..<1_000_000_000_000_000_000, using: &generator))
        }
        for duration in edges + random {
            #expect(duration.milliseconds == duration.nanoseconds / 1_000_000, "\(duration)")
        }
    }
}
