import StopwatchProtocol
import Testing
@testable import swctl

/// `swctl cycle`, `pomodoro`, `next`, `snooze` and `restart` command lines: what each reads
/// as, and the one-line usage errors (exit 2) of the bad ones, refused before anything is
/// sent, each saying the range (`CyclePlan`'s rules).
@Suite("cycle command lines")
struct CycleCommandLineTests {
    static func command(_ arguments: [String]) throws -> Command {
        guard case .run(let invocation) = try SwctlInvocation.parse(arguments) else { throw UsageError("not a run: \(arguments)") }
        return invocation.command
    }

    static func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try SwctlInvocation.parse(arguments)
            return nil
        } catch {
            return error.message
        }
    }

    static func phase(_ label: String, _ milliseconds: Int64) -> Stopwatch.Phase { Stopwatch.Phase(label: label, targetMs: milliseconds) }

    @Test("cycle: each word a phase DURATION[:LABEL], labelled 1, 2, … without one; a first word that is not a duration is the NAME")
    func cycleWords() throws {
        #expect(try Self.command(["cycle", "25m:focus", "5m:break"]) == .cycle(
            name: nil, phases: [Self.phase("focus", 1_500_000), Self.phase("break", 300_000)], rounds: nil, auto: true
        ))
        #expect(try Self.command(["cycle", "pomo", "25m:focus", "5m"]) == .cycle(
            name: "pomo", phases: [Self.phase("focus", 1_500_000), Self.phase("2", 300_000)], rounds: nil, auto: true
        ))
        #expect(try Self.command(["cycle", "c", "200ms", "200ms", "--rounds", "2", "--manual"]) == .cycle(
            name: "c", phases: [Self.phase("1", 200), Self.phase("2", 200)], rounds: 2, auto: false
        ))
        // Options anywhere; a label may hold a colon after the first.
        #expect(try Self.command(["--rounds", "1000", "cycle", "1h:a:b"]) == .cycle(
            name: nil, phases: [Self.phase("a:b", 3_600_000)], rounds: 1000, auto: true
        ))
        // 16 phases, the most.
        let sixteen = try Self.command(["cycle"] + Array(repeating: "1s", count: 16))
        guard case .cycle(_, let phases, _, _) = sixteen else { Issue.record("not a cycle: \(sixteen)"); return }
        #expect(phases.map(\.label) == (1...16).map(String.init))
    }

    @Test("pomodoro is cycle 25m:focus 5m:break ×3, 25m:focus 15m:long-break, without end, automatic")
    func pomodoro() throws {
        let focus = Self.phase("focus", 1_500_000)
        let pause = Self.phase("break", 300_000)
        #expect(try Self.command(["pomodoro", "pomo"]) == .cycle(
            name: "pomo", phases: [focus, pause, focus, pause, focus, pause, focus, Self.phase("long-break", 900_000)], rounds: nil, auto: true
        ))
        guard case .cycle(nil, _, 2, false) = try Self.command(["pomodoro", "--rounds", "2", "--manual"]) else {
            Issue.record("pomodoro --rounds 2 --manual")
            return
        }
    }

    @Test("next, snooze and restart take a NAME; snooze a DURATION too (default 5m), the one word read as a duration when it is one")
    func nextSnoozeRestart() throws {
        #expect(try Self.command(["next"]) == .next(name: nil))
        #expect(try Self.command(["next", "pomo"]) == .next(name: "pomo"))
        #expect(try Self.command(["restart", "tea"]) == .restart(name: "tea"))
        #expect(try Self.command(["snooze"]) == .snooze(name: nil, by: .seconds(300)))
        #expect(try Self.command(["snooze", "tea"]) == .snooze(name: "tea", by: .seconds(300)))
        #expect(try Self.command(["snooze", "10m"]) == .snooze(name: nil, by: .seconds(600)))
        #expect(try Self.command(["snooze", "tea", "1s"]) == .snooze(name: "tea", by: .seconds(1)))
        #expect(try Self.command(["snooze", "tea", "24h"]) == .snooze(name: "tea", by: .seconds(86_400)))
    }

    @Test("bad cycles are refused before any call, saying the range", arguments: [
        (["cycle"], "cycle needs its phases, like 'swctl cycle 25m:focus 5m:break': from 1 to 16 phases"),
        (["cycle", "pomo"], "cycle needs its phases, like 'swctl cycle 25m:focus 5m:break': from 1 to 16 phases"),
        (["cycle"] + Array(repeating: "1s", count: 17), "cycle takes from 1 to 16 phases, got 17"),
        (["cycle", "0ms:a"], "'0ms' is not a phase's duration: \(TimerDuration.rule)"),
        (["cycle", "367d"], "'367d' is not a phase's duration: \(TimerDuration.rule)"),
        (["cycle", "5m:"], "'' is not a phase label: \(CyclePlan.labelRule)"),
        (["cycle", "5m:a/b"], "'a/b' is not a phase label: \(CyclePlan.labelRule)"),
        (["cycle", "5m:" + String(repeating: "x", count: 33)], "'\(String(repeating: "x", count: 33))' is not a phase label: \(CyclePlan.labelRule)"),
        (["cycle", "5m", "--rounds", "0"], "--rounds takes a number from 1 to 1000 rounds, not '0'"),
        (["cycle", "5m", "--rounds", "1001"], "--rounds takes a number from 1 to 1000 rounds, not '1001'"),
        (["cycle", "5m", "--rounds", "two"], "--rounds takes a number from 1 to 1000 rounds, not 'two'"),
        (["timer", "5m", "--rounds", "2"], "--rounds and --manual go with cycle and pomodoro"),
        (["next", "--manual"], "--rounds and --manual go with cycle and pomodoro"),
        (["snooze", "tea", "0.5s"], "'0.5s' is not a snooze: write it like 5m or 90s, from 1s to 24h"),
        (["snooze", "25h"], "'25h' is not a snooze: write it like 5m or 90s, from 1s to 24h"),
        (["snooze", "tea", "soon"], "'soon' is not a snooze: write it like 5m or 90s, from 1s to 24h"),
        (["snooze", "a", "b", "c"], "snooze takes a NAME and a DURATION, got 3 words"),
        (["next", "a", "b"], "next takes at most one name, got 2"),
        (["restart", "a/b"], StopwatchName.invalidNameMessage("a/b")),
        (["cycle", "25m:focus", "-5m:break"], "'-5m:break' is not a duration: a phase needs a positive one, such as 5m"),
        (["snooze", "tea", "-5m"], "'-5m' is not a duration: a snooze needs a positive one, such as 5m"),
    ])
    func refusals(arguments: [String], message: String) {
        #expect(Self.usageError(arguments) == message)
    }

    @Test("wait --for phase and report --by phase are read")
    func phaseOptions() throws {
        #expect(try Self.command(["wait", "pomo", "--for", "phase"]) == .wait(name: "pomo", for: .phase, timeout: nil))
        #expect(try Self.command(["report", "--by", "phase"]) == .report(HistoryRange(), by: .phase, .text))
    }

    @Test("the help names every cycle command and option")
    func help() {
        for word in ["cycle [NAME] DURATION[:LABEL]...", "pomodoro [NAME]", "next [NAME]", "snooze [NAME] [DURATION]", "restart [NAME]",
                     "--rounds N", "--manual", "expired|stop|change|phase", "name|day|device|phase", "{phase} {round}"] {
            #expect(SwctlInvocation.usage.contains(word), "\(word)")
        }
    }
}
