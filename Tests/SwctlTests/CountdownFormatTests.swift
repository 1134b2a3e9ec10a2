import StopwatchProtocol
import Testing
import Varlink
@testable import swctl

/// How countdowns read in every format: the time left, rounded up so that `0:00:00` shows
/// only at the target, then `+overtime` rounded down; waybar's `expired` class; templates'
/// `{remaining}` and `{target}`; the REMAINING column of `list`. Written out by hand.
@Suite("swctl countdown formats")
struct CountdownFormatTests {
    /// 4 minutes, 1.5 s in: 3:58.5 left.
    static let tea = Stopwatch(name: "tea", state: .counting, elapsedMs: 1_500, targetMs: 240_000)
    /// 12.3 s past its 4 minutes.
    static let overtime = Stopwatch(name: "tea", state: .counting, elapsedMs: 252_300, targetMs: 240_000)
    static let atTarget = Stopwatch(name: "tea", state: .counting, elapsedMs: 240_000, targetMs: 240_000)
    static let pausedInOvertime = Stopwatch(name: "tea", state: .pause, elapsedMs: 250_000, lapsMs: [100_000], targetMs: 240_000)
    static let pausedBefore = Stopwatch(name: "tea", state: .pause, elapsedMs: 60_000, targetMs: 240_000)
    static let reminder = Stopwatch(name: "work", state: .counting, elapsedMs: 3_000_000, lapsMs: [1_000_000, 2_000_000], targetMs: 7_200_000)
    static let plain = Stopwatch(name: "plain", state: .counting, elapsedMs: 83_456)

    @Test("remaining: rounded up to the unit shown, 0:00:00 only at the target, then +overtime rounded down", arguments: [
        (Int64(0), "0:04:00", "0:04:00.0"),
        (1, "0:04:00", "0:04:00.0"),
        (1_500, "0:03:59", "0:03:58.5"),
        (1_501, "0:03:59", "0:03:58.5"),
        (1_550, "0:03:59", "0:03:58.5"),
        (239_000, "0:00:01", "0:00:01.0"),
        (239_999, "0:00:01", "0:00:00.1"),
        (240_000, "0:00:00", "0:00:00.0"),
        (240_001, "+0:00:00", "+0:00:00.0"),
        (240_999, "+0:00:00", "+0:00:00.9"),
        (252_300, "+0:00:12", "+0:00:12.3"),
        (3_840_000, "+1:00:00", "+1:00:00.0"),
    ])
    func remaining(elapsedMs: Int64, whole: String, tenths: String) {
        let stopwatch = Stopwatch(name: "t", state: .counting, elapsedMs: elapsedMs, targetMs: 240_000)
        #expect(RemainingText.string(for: stopwatch, tenths: false) == whole)
        #expect(RemainingText.string(for: stopwatch, tenths: true) == tenths)
    }

    @Test("remaining: nil for a plain stopwatch; what a daemon sends never traps")
    func remainingEdges() {
        #expect(RemainingText.string(for: Self.plain, tenths: false) == nil)
        #expect(RemainingText.target(of: Self.plain, tenths: false) == nil)
        let extremes: [(Int64, Int64)] = [(.min, .max), (.max, .min), (.min, .min), (.max, .max), (-5, 1), (0, .max), (.max - 1, .max)]
        for (elapsed, target) in extremes {
            let stopwatch = Stopwatch(name: "t", state: .counting, elapsedMs: elapsed, targetMs: target)
            #expect(RemainingText.string(for: stopwatch, tenths: true) != nil)
            _ = WatchFormat.waybar.line(for: stopwatch, tenths: false)
            _ = StatusText.table([stopwatch], tenths: true)
        }
        #expect(RemainingText.string(for: Stopwatch(name: "t", state: .counting, elapsedMs: .min, targetMs: .max), tenths: false)
            == "2562047788015:12:55")
    }

    /// (elapsed, target, remainingMs): exact, then past either end of `Int64`, and the one
    /// difference that fits but is `Int64.min`.
    static let remainingExtremes: [(Int64, Int64, Int64)] = [
        (0, 240_000, 240_000), (252_300, 240_000, -12_300), (.max, .max, 0), (.min, .min, 0), (.max, 0, -.max),
        (.min + 1, -1, .max - 1), (.min, .max, .max), (-1, .max, .max), (.min, 1, .max), (.min, 0, .max),
        (.max, .min, -.max), (.max, -2, -.max), (.max, -1, -.max), (1, .min, -.max), (0, .min, -.max),
    ]

    @Test("remainingMs: exact where it fits, clamped to ±Int64.max by sign where it does not; never Int64.min, so negating it is safe",
          arguments: remainingExtremes)
    func remainingMs(elapsedMs: Int64, targetMs: Int64, expected: Int64) throws {
        let stopwatch = Stopwatch(name: "t", state: .counting, elapsedMs: elapsedMs, targetMs: targetMs)
        let remaining = try #require(stopwatch.remainingMs)
        #expect(remaining == expected)
        // What a client does with it: the overtime is its negation, which must not trap.
        try #require(remaining != .min)
        #expect(-remaining == -expected)
        #expect(Stopwatch(name: "t", state: .counting, elapsedMs: elapsedMs).remainingMs == nil)
    }

    @Test("status and plain watch: the time left of the target, then over it", arguments: [
        (tea, false, "tea counting 0:03:59 left of 0:04:00"),
        (tea, true, "tea counting 0:03:58.5 left of 0:04:00.0"),
        (atTarget, false, "tea counting 0:00:00 left of 0:04:00"),
        (overtime, false, "tea counting +0:00:12 over 0:04:00"),
        (overtime, true, "tea counting +0:00:12.3 over 0:04:00.0"),
        (pausedInOvertime, false, "tea paused +0:00:10 over 0:04:00 (1 lap)"),
        (pausedBefore, false, "tea paused 0:03:00 left of 0:04:00"),
        (reminder, false, "work counting 1:10:00 left of 2:00:00 (2 laps)"),
    ])
    func summary(stopwatch: Stopwatch, tenths: Bool, expected: String) {
        #expect(WatchFormat.plain.line(for: stopwatch, tenths: tenths) == expected)
        #expect(StatusText.lines(for: stopwatch, tenths: tenths).first == expected)
    }

    @Test("status: a countdown's laps are split times, as for any stopwatch")
    func statusLaps() {
        #expect(StatusText.lines(for: Self.reminder, tenths: false) == [
            "work counting 1:10:00 left of 2:00:00 (2 laps)",
            "  lap 1  0:16:40  (+0:16:40)",
            "  lap 2  0:33:20  (+0:16:40)",
        ])
    }

    @Test("waybar: the time left, class expired from the target on (counting or paused), the target in the tooltip", arguments: [
        (tea, #"{"text":"0:03:59","tooltip":"tea: counting at 0:00:01, target 0:04:00","class":"counting"}"#),
        (atTarget, #"{"text":"0:00:00","tooltip":"tea: counting at 0:04:00, target 0:04:00","class":"expired"}"#),
        (overtime, #"{"text":"+0:00:12","tooltip":"tea: counting at 0:04:12, target 0:04:00","class":"expired"}"#),
        (pausedInOvertime, #"{"text":"+0:00:10","tooltip":"tea: paused at 0:04:10, target 0:04:00, 1 lap","class":"expired"}"#),
        (pausedBefore, #"{"text":"0:03:00","tooltip":"tea: paused at 0:01:00, target 0:04:00","class":"pause"}"#),
        (plain, #"{"text":"0:01:23","tooltip":"plain: counting at 0:01:23","class":"counting"}"#),
    ])
    func waybar(stopwatch: Stopwatch, expected: String) throws {
        let line = WatchFormat.waybar.line(for: stopwatch, tenths: false)
        #expect(line == expected)
        guard case .object(let object) = try JSONParser.parse(line) else {
            Issue.record("not an object: \(line)")
            return
        }
        #expect(object.keys == ["text", "tooltip", "class"])
    }

    @Test("i3blocks and polybar: the time left, then the state unless counting", arguments: [
        (tea, "0:03:59"), (overtime, "+0:00:12"), (atTarget, "0:00:00"), (pausedInOvertime, "+0:00:10 paused"),
        (pausedBefore, "0:03:00 paused"), (plain, "0:01:23"),
    ])
    func bars(stopwatch: Stopwatch, expected: String) {
        #expect(WatchFormat.i3blocks.line(for: stopwatch, tenths: false) == expected)
        #expect(WatchFormat.polybar.line(for: stopwatch, tenths: false) == expected)
    }

    @Test("json: the Stopwatch object unchanged, with target_ms")
    func json() throws {
        let line = WatchFormat.json.line(for: Self.tea, tenths: false)
        #expect(line == #"{"name":"tea","state":"counting","elapsed_ms":1500,"laps_ms":[],"target_ms":240000}"#)
        #expect(try Stopwatch(json: JSONParser.parse(line)) == Self.tea)
    }

    @Test("templates: {remaining} and {target}, empty for a plain stopwatch and while unavailable")
    func templates() throws {
        let format = try WatchFormat(argument: "{name} {remaining}/{target} [{elapsed}]")
        #expect(format.line(for: Self.tea, tenths: false) == "tea 0:03:59/0:04:00 [0:00:01]")
        #expect(format.line(for: Self.overtime, tenths: true) == "tea +0:00:12.3/0:04:00.0 [0:04:12.3]")
        #expect(format.line(for: Self.plain, tenths: false) == "plain / [0:01:23]")
        #expect(format.unavailableLine(name: "tea", reason: "gone") == "tea / [--:--:--]")
    }

    @Test("a countdown of a fraction of a second shows tenths whatever the tick")
    func fractionalTarget() {
        let egg = Stopwatch(name: "egg", state: .counting, elapsedMs: 120, targetMs: 1_500)
        #expect(StatusText.lines(for: egg, tenths: false) == ["egg counting 0:00:01.4 left of 0:00:01.5"])
        #expect(WatchFormat.i3blocks.line(for: egg, tenths: false) == "0:00:01.4")
        #expect(StatusText.table([egg, Self.plain], tenths: false) == [
            "NAME   STATE       ELAPSED  REMAINING  LAPS",
            "egg    counting  0:00:00.1  0:00:01.4     0",
            "plain  counting  0:01:23.4          -     0",
        ])
    }

    @Test("a countdown shorter than the unit shown starts at its target, never at a target of zero", arguments: [
        (Int64(0), Int64(50), "x counting 0:00:00.1 left of 0:00:00.1"),
        (0, 1_050, "x counting 0:00:01.1 left of 0:00:01.1"),
        (40, 50, "x counting 0:00:00.1 left of 0:00:00.1"),
        (50, 50, "x counting 0:00:00.0 left of 0:00:00.1"),
    ])
    func targetBelowTheUnitShown(elapsedMs: Int64, targetMs: Int64, expected: String) {
        let stopwatch = Stopwatch(name: "x", state: .counting, elapsedMs: elapsedMs, targetMs: targetMs)
        #expect(StatusText.lines(for: stopwatch, tenths: false) == [expected])
        #expect(RemainingText.target(of: stopwatch, tenths: true) == String(expected.split(separator: " ").last!))
    }

    @Test("list: a REMAINING column when any is a countdown, '-' for the plain ones")
    func table() {
        #expect(StatusText.table([Self.plain, Self.overtime, Self.reminder], tenths: false) == [
            "NAME   STATE     ELAPSED  REMAINING  LAPS",
            "plain  counting  0:01:23          -     0",
            "tea    counting  0:04:12   +0:00:12     0",
            "work   counting  0:50:00    1:10:00     2",
        ])
        // Without countdowns, the table it always had.
        #expect(StatusText.table([Self.plain], tenths: false) == [
            "NAME   STATE     ELAPSED  LAPS",
            "plain  counting  0:01:23     0",
        ])
    }
}
