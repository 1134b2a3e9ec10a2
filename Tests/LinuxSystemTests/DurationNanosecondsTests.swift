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
}
