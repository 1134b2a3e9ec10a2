import StopWatchCore
@testable import StopwatchDaemon
import Testing
import Varlink

/// Nothing stored can crash the daemon (SPEC §4): records out of range are refused with a
/// reason, and the arithmetic on what is accepted — or on anything else — never traps.
@Suite("records in range, arithmetic that never traps")
struct RangeTests {
    let now = ClockReading(boot: .seconds(1000), wall: .seconds(1_700_000_000), bootID: "boot-a")

    func counting(bootID: String, originBoot: Int64, originWall: Int64, elapsed: Int64 = 0) throws -> StopwatchRecord {
        let text = #"{"format":1,"name":"a","state":"counting","elapsed_ns":\#(elapsed),"laps_ns":[],"boot_id":"\#(bootID)","origin_boot_ns":\#(originBoot),"origin_wall_ns":\#(originWall)}"#
        return try StopwatchRecord(json: JSONParser.parse(text))
    }

    @Test("values out of range are refused as the record is read", arguments: [
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":9223372036854775807,"laps_ns":[]}"#,
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":3155760000000000001,"laps_ns":[]}"#,
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[-1]}"#,
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[9223372036854775807]}"#,
        #"{"format":1,"name":"a","state":"counting","elapsed_ns":1,"laps_ns":[],"boot_id":"b","origin_boot_ns":1,"origin_wall_ns":-1}"#,
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[],"target_ns":0}"#,
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[],"target_ns":-1000000}"#,
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[],"target_ns":31622400001000000}"#,
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[],"target_ns":1500}"#,
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[],"target_ns":"1s"}"#,
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[],"target_ns":1000000,"expired":1}"#,
    ])
    func refused(text: String) throws {
        #expect(throws: MalformedMessage.self) { try StopwatchRecord(json: JSONParser.parse(text)) }
    }

    @Test("a countdown's target and expiry round-trip; a file without them (any earlier one) is a plain stopwatch")
    func countdownFields() throws {
        let expired = StopWatchSnapshot.counting(since: .seconds(900), laps: [.seconds(5)], now: .seconds(1000), target: .seconds(60), hasExpired: true)
        let record = StopwatchRecord(name: "tea", snapshot: expired, at: now)
        let reread = try StopwatchRecord(json: JSONParser.parse(record.json.serialized))
        #expect(reread == record)
        #expect(reread.snapshot(restoredAt: now) == expired)
        let paused = StopWatchSnapshot.paused(at: .seconds(3), target: .seconds(60))
        #expect(try StopwatchRecord(json: StopwatchRecord(name: "p", snapshot: paused, at: now).json).snapshot(restoredAt: now) == paused)
        let plain = try StopwatchRecord(json: JSONParser.parse(#"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[]}"#))
        #expect(plain.target == nil && !plain.hasExpired)
        #expect(!String(decoding: StopwatchRecord(name: "a", snapshot: .paused(at: .seconds(1)), at: now).json.serialized, as: UTF8.self).contains("target"))
    }

    @Test("on the same boot, an origin in the future or more than 100 years back is out of range", arguments: [
        Int64.min, -4_000_000_000_000_000_000, 1_001_000_000_000, Int64.max,
    ])
    func sameBootOutOfRange(originBoot: Int64) throws {
        let record = try counting(bootID: "boot-a", originBoot: originBoot, originWall: 1_600_000_000_000_000_000)
        #expect(throws: MalformedMessage.self) { try record.checkRange(at: now) }
    }

    @Test("a wall-clock origin more than 100 years back is out of range, on any boot")
    func ancientWallOrigin() throws {
        let record = try counting(bootID: "boot-z", originBoot: 5, originWall: 0)
        let farFuture = ClockReading(boot: .seconds(1), wall: .seconds(5_000_000_000), bootID: "boot-b")
        #expect(throws: MalformedMessage.self) { try record.checkRange(at: farFuture) }
    }

    @Test("in range: an origin before this boot (carried over a reboot), and a wall origin ahead of a clock set back")
    func inRange() throws {
        try counting(bootID: "boot-a", originBoot: -7_200_000_000_000, originWall: 1_699_990_000_000_000_000).checkRange(at: now)
        let setBack = try counting(bootID: "boot-z", originBoot: 5, originWall: 1_800_000_000_000_000_000, elapsed: 5_000_000_000)
        try setBack.checkRange(at: now)
        #expect(setBack.snapshot(restoredAt: now).state == .counting(.seconds(5)))
    }

    static let extremes: [Duration] = [
        .nanoseconds(Int64.min), .nanoseconds(-1), .zero, .nanoseconds(1), .seconds(1_700_000_000), .nanoseconds(Int64.max),
    ]

    @Test("a counting snapshot at any clock readings: elapsed, the next tick, ticking and a record never trap")
    func snapshotArithmetic() {
        for origin in Self.extremes {
            for clock in Self.extremes {
                let snapshot = StopWatchSnapshot.counting(since: origin, laps: [.nanoseconds(Int64.max)], now: clock)
                #expect(snapshot.elapsed(at: clock) >= .zero)
                for interval in [Duration.zero, .nanoseconds(-5), .milliseconds(1), .seconds(1), .nanoseconds(Int64.max)] {
                    if let next = snapshot.nextTick(after: clock, every: interval) {
                        #expect(next > clock)
                    }
                }
                _ = snapshot.ticked(at: clock)
                let reading = ClockReading(boot: clock, wall: origin, bootID: "boot-a")
                let record = StopwatchRecord(name: "a", snapshot: snapshot, at: reading)
                #expect(record.originWall.map { $0 >= .zero } ?? true)
                for restoredAt in [reading, ClockReading(boot: origin, wall: clock, bootID: "boot-b")] {
                    _ = record.snapshot(restoredAt: restoredAt)
                    _ = try? record.checkRange(at: restoredAt)
                }
            }
        }
    }

    @Test("transitions dated in the past, on either clock, at any clock readings: never trap; their records neither")
    func datedTransitionArithmetic() {
        for countsSleep in [true, false] {
            for origin in Self.extremes {
                for clock in Self.extremes {
                    let instant = StopWatchInstant(boot: clock, awake: origin)
                    let counting = StopWatchSnapshot.counting(
                        since: origin, laps: [.nanoseconds(Int64.max)], now: clock, countsSleep: countsSleep, intervalStartBoot: origin,
                        latestLapBoot: clock
                    )
                    let paused = StopWatchSnapshot.paused(
                        at: .seconds(5), countsSleep: countsSleep, latestTransition: origin, latestTransitionBoot: clock
                    )
                    for ago in Self.extremes {
                        for snapshot in [counting, paused, .stopped] {
                            for kind in [StopWatchCommand.Transition.start, .stop, .toggle] {
                                guard let after = try? snapshot.applying(.transition(kind, ago: ago, note: nil), at: instant) else { continue }
                                let reading = ClockReading(boot: clock, awake: origin, wall: origin, bootID: "boot-a")
                                let record = StopwatchRecord(name: "a", snapshot: after, at: reading)
                                _ = try? record.checkRange(at: reading)
                                _ = record.snapshot(restoredAt: reading)
                                _ = record.snapshot(restoredAt: ClockReading(boot: origin, wall: clock, bootID: "boot-b"))
                            }
                        }
                    }
                    _ = try? paused.applying(.setCountsSleep(!countsSleep), at: instant)
                }
            }
        }
    }

    @Test("a stopwatch ~292 years in gets no next tick instead of overflowing")
    func noTickPastInt64() {
        let snapshot = StopWatchSnapshot.counting(since: .zero, now: .nanoseconds(Int64.max - 10))
        #expect(snapshot.nextTick(after: .nanoseconds(Int64.max - 10), every: .seconds(1)) == nil)
        #expect(snapshot.nextTick(after: .seconds(10), every: .seconds(1)) == .seconds(11))
    }
}
