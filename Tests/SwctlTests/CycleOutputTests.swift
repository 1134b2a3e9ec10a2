import StopwatchProtocol
import Testing
@testable import swctl

/// A cycle's phase and round as `status`, `list`, `watch` (plain, Waybar, templates) show
/// them, the phase in `log`'s table and `report --by phase`; and that a stopwatch without a
/// cycle, and a history without phases, print as they always did.
@Suite("cycle output")
struct CycleOutputTests {
    static let phases = [Stopwatch.Phase(label: "focus", targetMs: 1_500_000), Stopwatch.Phase(label: "break", targetMs: 300_000)]

    static func pomodoro(phase: Int = 0, round: Int = 2, rounds: Int? = 4, elapsed: Int64 = 1_000, state: Stopwatch.State = .counting) -> Stopwatch {
        Stopwatch(
            name: "pomo", state: state, elapsedMs: elapsed, targetMs: phases[phase].targetMs,
            cycle: .init(phases: phases, phase: phase, round: round, rounds: rounds)
        )
    }

    static let tea = Stopwatch(name: "tea", state: .stopped, elapsedMs: 0)

    @Test("status: the phase and round after the time, focus 2/4; without end, focus 2")
    func status() {
        #expect(StatusText.lines(for: Self.pomodoro(), tenths: false) == ["pomo counting 0:24:59 left of 0:25:00 in focus 2/4"])
        #expect(StatusText.lines(for: Self.pomodoro(phase: 1, rounds: nil, elapsed: 302_000), tenths: false) == ["pomo counting +0:00:02 over 0:05:00 in break 2"])
        #expect(WatchFormat.plain.line(for: Self.pomodoro(), tenths: false) == "pomo counting 0:24:59 left of 0:25:00 in focus 2/4")
    }

    @Test("list: a PHASE column when any runs a cycle, - for the others; none otherwise")
    func list() {
        #expect(StatusText.table([Self.pomodoro(), Self.tea], tenths: false) == [
            "NAME  STATE     ELAPSED  REMAINING  PHASE      LAPS",
            "pomo  counting  0:00:01    0:24:59  focus 2/4     0",
            "tea   stopped   0:00:00          -  -             0",
        ])
        #expect(StatusText.table([Self.tea], tenths: false) == ["NAME  STATE    ELAPSED  LAPS", "tea   stopped  0:00:00     0"])
    }

    @Test("waybar: the text ends with the phase, the class is [state, label], the tooltip says phase and round; a plain one keeps its string class")
    func waybar() {
        #expect(WatchFormat.waybar.line(for: Self.pomodoro(), tenths: false)
            == #"{"text":"0:24:59 focus","tooltip":"pomo: counting at 0:00:01, target 0:25:00, focus 2/4","class":["counting","focus"]}"#)
        #expect(WatchFormat.waybar.line(for: Self.pomodoro(phase: 1, elapsed: 400_000), tenths: false)
            == #"{"text":"+0:01:40 break","tooltip":"pomo: counting at 0:06:40, target 0:05:00, break 2/4","class":["expired","break"]}"#)
        #expect(WatchFormat.waybar.line(for: Self.tea, tenths: false) == #"{"text":"0:00:00","tooltip":"tea: stopped at 0:00:00","class":"stopped"}"#)
    }

    @Test("a label a CSS selector cannot name becomes a class it can: spaces and punctuation as '-', letters of any script kept")
    func waybarClassOfLabel() {
        #expect(WatchFormat.cssClass("long break") == "long-break")
        #expect(WatchFormat.cssClass("a.b:c#d") == "a-b-c-d")
        #expect(WatchFormat.cssClass("pause_café-2") == "pause_café-2")
    }

    @Test("templates: {phase} and {round} (2/4, 2 without end), empty without a cycle; {note}")
    func templates() throws {
        let template = try WatchFormat(argument: "{name} {phase} {round} {remaining}|{note}")
        #expect(template.line(for: Self.pomodoro(), tenths: false) == "pomo focus 2/4 0:24:59|")
        #expect(template.line(for: Self.pomodoro(phase: 1, rounds: nil), tenths: false) == "pomo break 2 0:04:59|")
        var noted = Self.tea
        noted.note = "why"
        #expect(template.line(for: noted, tenths: false) == "tea   |why")
        #expect(template.unavailableLine(name: "pomo", reason: "gone") == "pomo   |")
    }

    @Test("json: the Stopwatch with its cycle")
    func json() {
        #expect(WatchFormat.json.line(for: Self.pomodoro(rounds: nil), tenths: false).contains(
            #""cycle":{"phases":[{"label":"focus","target_ms":1500000},{"label":"break","target_ms":300000}],"phase":0,"round":2,"auto":true}"#
        ))
    }

    static let history = [
        Interval(id: "a100000000000000", name: "pomo", startMs: 0, endMs: 1_500_000, elapsedMs: 1_500_000, phase: "focus", device: "desk"),
        Interval(id: "a200000000000000", name: "pomo", startMs: 1_500_000, endMs: 1_800_000, elapsedMs: 300_000, phase: "break", device: "desk"),
        Interval(id: "a300000000000000", name: "work", startMs: 1_800_000, endMs: 3_600_000, elapsedMs: 1_800_000, device: "desk"),
        Interval(id: "a400000000000000", name: "pomo", startMs: 3_600_000, endMs: 5_100_000, elapsedMs: 1_500_000, phase: "focus", device: "desk"),
    ]

    @Test("log: a PHASE column when any row has a phase (- for the others), none otherwise; the one-line form says 'in LABEL'")
    func logPhase() {
        var survey = LogNumbering.Survey()
        LogNumbering(name: nil, until: nil).survey(Self.history, into: &survey)
        #expect(survey.layout == LogText.Layout(numberWidth: 2, nameWidth: 4, phaseWidth: 5))
        var plain = LogNumbering.Survey()
        LogNumbering(name: nil, until: nil).survey([Self.history[2]], into: &plain)
        #expect(plain.layout == LogText.Layout(numberWidth: 2, nameWidth: 4))
        let layout = LogText.Layout(numberWidth: 2, nameWidth: 4, phaseWidth: 5)
        #expect(LogText.header(layout).hasSuffix("ELAPSED  PHASE"))
        #expect(LogText.row(Self.history[0], number: 4, layout: layout).hasSuffix("0:25:00  focus"))
        #expect(LogText.row(Self.history[2], number: 2, layout: layout).hasSuffix("0:30:00  -"))
        #expect(LogText.line(Self.history[1]).hasSuffix("(0:05:00) in break"))
        #expect(!LogText.line(Self.history[2]).contains(" in "))
    }

    @Test("report --by phase: time per phase label and name, longest first; intervals of no phase under -, null in JSON, empty in CSV")
    func reportByPhase() {
        var aggregator = ReportAggregator(since: nil, until: nil, now: 10_000_000, byDay: false)
        for interval in Self.history { aggregator.add(byPhase: interval) }
        let totals = aggregator.totals
        #expect(totals.groups.map(\.label) == ["focus", nil, "break"])
        #expect(totals.groups.map(\.total) == [3_000_000, 1_800_000, 300_000])
        #expect(totals.total == 5_100_000)
        #expect(ReportText.humanByGroup(totals, .phase, bars: false) == [
            "PHASE  NAME   TIME",
            "focus  pomo   0:50:00",
            "       total  0:50:00",
            "-      work   0:30:00",
            "       total  0:30:00",
            "break  pomo   0:05:00",
            "       total  0:05:00",
            "total         1:25:00",
        ])
        #expect(ReportText.csvByGroup(totals, .phase) == ["phase,name,elapsed_ms", "focus,pomo,3000000", ",work,1800000", "break,pomo,300000"])
        #expect(
            ReportText.jsonByGroup(totals, .phase, since: nil, until: nil).text
                == #"{"since_ms":null,"until_ms":null,"phases":[{"phase":"focus","names":[{"name":"pomo","elapsed_ms":3000000}],"total_ms":3000000},{"phase":null,"names":[{"name":"work","elapsed_ms":1800000}],"total_ms":1800000},{"phase":"break","names":[{"name":"pomo","elapsed_ms":300000}],"total_ms":300000}],"total_ms":5100000}"#
        )
    }
}
