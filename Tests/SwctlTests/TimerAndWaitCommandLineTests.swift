import StopwatchProtocol
import Testing
@testable import swctl

/// `swctl timer` and `swctl wait` command lines: what each reads as, and the one-line usage
/// errors (exit 2) of the bad ones.
@Suite("timer and wait command lines")
struct TimerAndWaitCommandLineTests {
    static func invocation(_ arguments: [String]) throws -> SwctlInvocation {
        guard case .run(let invocation) = try SwctlInvocation.parse(arguments) else {
            throw UsageError("not a run: \(arguments)")
        }
        return invocation
    }

    static func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try SwctlInvocation.parse(arguments)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("timer durations: DurationText's forms, compound ones from the largest unit down", arguments: [
        ("250ms", Duration.milliseconds(250)), ("1s", .seconds(1)), ("1.5s", .milliseconds(1500)), ("2m", .seconds(120)),
        ("1h", .seconds(3600)), ("1h30m", .seconds(5400)), ("2m30s", .seconds(150)), ("1m500ms", .milliseconds(60_500)),
        ("1h1m1s1ms", .milliseconds(3_661_001)), ("1ms", .milliseconds(1)), ("1.5ms", .milliseconds(1)),
        ("8784h", .seconds(366 * 86_400)), ("25m", .seconds(1500)),
        // Days (SPEC §5), alone and in compounds; 366 days is the longest.
        ("2d", .seconds(172_800)), ("1d12h", .seconds(129_600)), ("366d", .seconds(31_622_400)), ("1.5d", .seconds(129_600)),
        ("1d1h1m1s1ms", .milliseconds(90_061_001)), ("1d30min", .seconds(88_200)),
        // `min` as systemd writes it, also in compounds.
        ("5min", .seconds(300)), ("1h30min", .seconds(5400)), ("2min30s", .seconds(150)),
    ])
    func timerDurations(text: String, expected: Duration) {
        #expect(TimerDuration.parse(text) == expected)
    }

    @Test("not timer durations: bad forms, units out of order, out of 1ms…366 days", arguments: [
        "", "25", "m", "abc", "-1s", "1e3s", "0ms", "0s", "0.4ms", "8784h1ms", "8785h", "9999999999h",
        "30m1h", "1m1m", "1s1m", "1m1min", "5mins", "5 min", "1h 30m", "1h30", "inf s", "1..5s", "tea",
        "367d", "366d1ms", "12h1d", "1d1d", "1dd", "d", "-1d",
    ])
    func notTimerDurations(text: String) {
        #expect(TimerDuration.parse(text) == nil)
    }

    @Test("timer: one word is the duration of the default stopwatch, two are NAME DURATION")
    func timer() throws {
        #expect(try Self.invocation(["timer", "25m"]) == SwctlInvocation(.timer(name: nil, .countdown(.seconds(1500)))))
        #expect(try Self.invocation(["timer", "tea", "4m"]) == SwctlInvocation(.timer(name: "tea", .countdown(.seconds(240)))))
        let keep = SwctlInvocation(.timer(name: "work", .keepCounting(.seconds(7200))))
        #expect(try Self.invocation(["timer", "work", "2h", "--keep"]) == keep)
        #expect(try Self.invocation(["--keep", "timer", "work", "2h"]) == keep)
        #expect(try Self.invocation(["timer", "work", "--off"]) == SwctlInvocation(.timer(name: "work", .off)))
        #expect(try Self.invocation(["timer", "--off"]) == SwctlInvocation(.timer(name: nil, .off)))
        // A name that looks like a duration is still a name when a duration follows.
        #expect(try Self.invocation(["timer", "5m", "1m"]) == SwctlInvocation(.timer(name: "5m", .countdown(.seconds(60)))))
        var json = try Self.invocation(["--json", "timer", "1s"])
        #expect(json.json && json.command == .timer(name: nil, .countdown(.seconds(1))))
        json = try Self.invocation(["timer", "--", "1s"])
        #expect(json.command == .timer(name: nil, .countdown(.seconds(1))))
    }

    static let rule = "write it like 250ms, 1s, 1.5s, 2m, 1h, 1h30m, 2d or 1d12h, from 1ms to 366 days (8784h)"

    @Test("timer: usage errors say what to write", arguments: [
        (["timer"], "timer needs a DURATION, like 'swctl timer 25m' or 'swctl timer tea 4m'"),
        (["timer", "--keep"], "timer needs a DURATION, like 'swctl timer 25m' or 'swctl timer tea 4m'"),
        (["timer", "tea"], "'tea' is not a timer duration: \(rule)"),
        (["timer", "tea", "0s"], "'0s' is not a timer duration: \(rule)"),
        (["timer", "367d"], "'367d' is not a timer duration: \(rule)"),
        (["timer", "9000h"], "'9000h' is not a timer duration: \(rule)"),
        (["timer", "a", "b", "1m"], "timer takes a NAME and a DURATION, got 3 words"),
        (["timer", "tea", "4m", "--off"], "timer --off takes at most a NAME, no DURATION"),
        (["timer", "tea", "--off", "--keep"], "use either --keep (with a DURATION) or --off, not both"),
        (["timer", "bad/name", "4m"], StopwatchName.invalidNameMessage("bad/name")),
        (["timer", "egg", "-1m"], "'-1m' is not a duration: a timer needs a positive one, such as 1m"),
        (["timer", "-1h30m"], "'-1h30m' is not a duration: a timer needs a positive one, such as 1h30m"),
        (["timer", "tea", "-2d", "--keep"], "'-2d' is not a duration: a timer needs a positive one, such as 2d"),
        // Not after timer, or not a duration: an option unknown, as ever.
        (["start", "-1m"], "unknown option '-1m'"),
        (["timer", "tea", "-x"], "unknown option '-x'"),
        (["start", "--keep"], "--keep goes with timer"),
        (["status", "--off"], "--off goes with timer and skip-sleep"),
    ])
    func timerUsage(arguments: [String], message: String) {
        #expect(Self.usageError(arguments) == message)
    }

    @Test("the range in the message is the protocol's")
    func ruleIsTheProtocols() {
        #expect(TimerDuration.rule.hasSuffix(CountdownTarget.rule))
    }

    @Test("wait: the default, --for each condition, --timeout")
    func wait() throws {
        #expect(try Self.invocation(["wait"]) == SwctlInvocation(.wait(name: nil, for: nil, timeout: nil)))
        #expect(try Self.invocation(["wait", "tea"]) == SwctlInvocation(.wait(name: "tea", for: nil, timeout: nil)))
        for condition in WaitCondition.allCases {
            let expected = SwctlInvocation(.wait(name: "tea", for: condition, timeout: nil))
            #expect(try Self.invocation(["wait", "tea", "--for", condition.rawValue]) == expected)
            #expect(try Self.invocation(["wait", "--for=\(condition.rawValue)", "tea"]) == expected)
        }
        #expect(try Self.invocation(["wait", "tea", "--timeout", "100ms"]) == SwctlInvocation(.wait(name: "tea", for: nil, timeout: .milliseconds(100))))
        #expect(try Self.invocation(["wait", "tea", "--timeout=0s"]) == SwctlInvocation(.wait(name: "tea", for: nil, timeout: .zero)))
        // Days, and compounds, as every duration takes them.
        #expect(try Self.invocation(["wait", "tea", "--timeout", "1d12h"]) == SwctlInvocation(.wait(name: "tea", for: nil, timeout: .seconds(129_600))))
    }

    @Test("wait: usage errors", arguments: [
        (["wait", "--for", "nope"], "--for takes expired, stop, change or phase, not 'nope'"),
        (["wait", "--for"], "--for needs a value"),
        (["wait", "--timeout", "5"], "--timeout takes a duration like 250ms, 1s, 1.5s, 2m, 1h, 1h30m, 2d or 1d12h, not '5'"),
        (["wait", "--timeout", "-1s"], "--timeout takes a duration like 250ms, 1s, 1.5s, 2m, 1h, 1h30m, 2d or 1d12h, not '-1s'"),
        (["wait", "a", "b"], "wait takes at most one name, got 2"),
        (["watch", "--for", "stop"], "--for and --timeout go with wait"),
        (["status", "--timeout", "1s"], "--for and --timeout go with wait"),
        (["wait", "--keep"], "--keep goes with timer"),
        (["wait", "--format", "json"], "--format goes with watch"),
    ])
    func waitUsage(arguments: [String], message: String) {
        #expect(Self.usageError(arguments) == message)
    }

    @Test("the help names timer, wait, their options and exit 124")
    func help() {
        for word in [
            "timer [NAME] DURATION [--keep]", "timer [NAME] --off", "--for expired|stop|change", "--timeout DURATION", "{remaining} {target}", "124",
            "2d, 1d12h", "clearing any laps", "until it is done", "a stopwatch stops (the default otherwise; at\n", "once if it is not counting",
        ] {
            #expect(SwctlInvocation.usage.contains(word), "\(word)")
        }
    }
}
