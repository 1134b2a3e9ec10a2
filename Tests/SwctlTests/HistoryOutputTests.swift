import StopwatchProtocol
import Testing
import Varlink
@testable import swctl

/// What `swctl log` and `report` print and read that does not depend on the time zone:
/// WHEN's forms, CSV fields, bars, display widths, the command line.
@Suite("swctl log and report: formats")
struct HistoryOutputTests {
    @Test(arguments: [
        ("now", When.now), ("today", .startOfDay(daysAgo: 0)), ("yesterday", .startOfDay(daysAgo: 1)),
        ("Today", .startOfDay(daysAgo: 0)), ("sunday", .weekday(0)), ("monday", .weekday(1)), ("mon", .weekday(1)),
        ("saturday", .weekday(6)), ("fri", .weekday(5)), ("7d", .ago(milliseconds: 604_800_000)),
        ("3h", .ago(milliseconds: 10_800_000)), ("90m", .ago(milliseconds: 5_400_000)), ("0m", .ago(milliseconds: 0)),
        ("2026-11-24", .local(year: 2026, month: 11, day: 24, hour: 0, minute: 0)),
        ("2028-02-29", .local(year: 2028, month: 2, day: 29, hour: 0, minute: 0)),
        ("2026-11-24T09:15", .local(year: 2026, month: 11, day: 24, hour: 9, minute: 15)),
        ("2026-11-24 23:59", .local(year: 2026, month: 11, day: 24, hour: 23, minute: 59)),
    ])
    func whenForms(text: String, expected: When) {
        #expect(When(text) == expected)
    }

    @Test(arguments: [
        "", "tomorrow", "mond", "d", "7", "7w", "-3d", "1234567d", "3.5h", "2026-13-01", "2026-00-10", "2026-02-29",
        "2026-04-31", "2026-11-24T24:00", "2026-11-24T09:60", "2026-11-24T9:15", "26-11-24", "2026/11/24",
        "2026-11-24T09:15:00", "1969-12-31", "２０２６-11-24",
        // HH:MM's bad forms.
        "24:00", "9:60", "09:5", "123:00", ":30", "09:", "09:30:00", "-9:30", "9h30", "0９:30",
    ])
    func badWhen(text: String) {
        #expect(When(text) == nil)
    }

    @Test func csvEscaping() {
        #expect(CSVField.escaped("client call") == "client call")
        #expect(CSVField.escaped("a,b") == "\"a,b\"")
        #expect(CSVField.escaped("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(CSVField.escaped("\"") == "\"\"\"\"")
        #expect(CSVField.escaped("line\nbreak") == "\"line\nbreak\"")
        #expect(CSVField.row(["a,b", "x", "1"]) == "\"a,b\",x,1")
    }

    @Test(
        "CSV: a name a spreadsheet would take for a formula (=, +, -, @, tab or CR first) gets a ' in front, then CSV's quoting, in log and report; the times and numbers swctl writes stay as they are",
        arguments: [
            ("=HYPERLINK(\"http://x\",\"y\")", "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""), ("+1", "'+1"), ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("\rx", "\"'\rx\""), ("=a,b", "\"'=a,b\""),
            ("a=b", "a=b"), ("'=x", "'=x"), ("café", "café"),
        ]
    )
    func csvFormulaNeutralised(name: String, field: String) {
        let interval = Interval(name: name, startMs: 0, endMs: 1_000, elapsedMs: 1_000)
        #expect(LogText.csv(interval).hasPrefix(field + ","))
        #expect(LogText.csv(interval).hasSuffix(",1000,,"))
        // A note is text a user wrote too.
        let noted = Interval(id: "0123456789abcdef", name: "x", startMs: 0, endMs: 1_000, elapsedMs: 1_000, note: name)
        #expect(LogText.csv(noted).hasSuffix(",1000,0123456789abcdef," + field))
        // So is an id: the daemon's are hex, but a socket or a synced file need not be.
        let odd = Interval(id: name, name: "x", startMs: 0, endMs: 1_000, elapsedMs: 1_000)
        #expect(LogText.csv(odd).hasSuffix(",1000," + field + ","))
        let totals = ReportTotals(
            names: [.init(name: name, milliseconds: 1_000)],
            days: [.init(day: "2026-11-24", names: [.init(name: name, milliseconds: 1_000)], total: 1_000)],
            total: 1_000
        )
        #expect(ReportText.csv(totals, byDay: false) == ["name,elapsed_ms", field + ",1000"])
        #expect(ReportText.csv(totals, byDay: true) == ["day,name,elapsed_ms", "2026-11-24," + field + ",1000"])
    }

    @Test func barsInEighths() {
        #expect(Bar.string(8, of: 8, width: 1) == "█")
        #expect(Bar.string(1, of: 8, width: 1) == "▏")
        #expect(Bar.string(5, of: 8, width: 1) == "▋")
        #expect(Bar.string(7, of: 8, width: 1) == "▉")
        #expect(Bar.string(1, of: 1_000_000, width: 20) == "▏")
        #expect(Bar.string(0, of: 8) == "")
        #expect(Bar.string(50, of: 100) == String(repeating: "█", count: 10))
        // Where value × 160 fits in Int64 but adding half the maximum would not: no trap.
        let huge = Int64.max / 160
        #expect(Bar.string(huge, of: huge) == String(repeating: "█", count: 20))
        #expect(Bar.string(huge / 2, of: huge) == String(repeating: "█", count: 10))
        #expect(Bar.string(.max, of: .max) == String(repeating: "█", count: 20))
        // 0:25:00 beside a longest of 3:12:40, on 20 cells: 20.76 eighths of a cell, rounded
        // to 21 (two cells and five eighths).
        #expect(Bar.string(1_500_000, of: 11_560_000) == "██▋")
        #expect(Bar.string(.max, of: .max) == String(repeating: "█", count: 20))
        #expect(Bar.string(.max / 2, of: .max) == String(repeating: "█", count: 10))
    }

    @Test func displayWidth() {
        #expect(TerminalWidth.of("client call") == 11)
        #expect(TerminalWidth.of("café") == 4)
        #expect(TerminalWidth.of("cafe\u{301}") == 4)
        #expect(TerminalWidth.of("タイマー") == 8)
        #expect(TerminalWidth.of("計時") == 4)
        #expect(TerminalWidth.of("한글") == 4)
        #expect(TerminalWidth.of("ｘ") == 2)
        #expect(TerminalWidth.of("🍅") == 2)
        #expect(TerminalWidth.padded("タイマー", to: 10) == "タイマー  ")
        // Per character, as a terminal draws it: a flag, a skin tone, a ZWJ sequence.
        #expect(TerminalWidth.of("🇫🇷") == 2)
        #expect(TerminalWidth.of("👍🏽") == 2)
        #expect(TerminalWidth.of("👩‍💻") == 2)
        #expect(TerminalWidth.of("a\u{200B}b") == 2)
    }

    @Test func namesComparedAsGiven() {
        #expect("café" == "cafe\u{301}")  // what a [String: …] would merge
        #expect(StopwatchKey("café") != StopwatchKey("cafe\u{301}"))
        #expect(Set([StopwatchKey("café"), StopwatchKey("cafe\u{301}"), StopwatchKey("café")]).count == 2)
    }

    @Test func reportTextByName() {
        let totals = ReportTotals(
            names: [.init(name: "client call", milliseconds: 11_560_000), .init(name: "café", milliseconds: 1_500_000)],
            days: [], total: 13_060_000
        )
        #expect(ReportText.human(totals, byDay: false, bars: false) == [
            "NAME         TIME", "client call  3:12:40", "café         0:25:00", "total        3:37:40",
        ])
        #expect(ReportText.human(totals, byDay: false, bars: true)[1] == "client call  3:12:40  " + String(repeating: "█", count: 20))
        #expect(ReportText.human(totals, byDay: false, bars: true)[2] == "café         0:25:00  ██▋")
        #expect(ReportText.csv(totals, byDay: false) == ["name,elapsed_ms", "client call,11560000", "café,1500000"])
        #expect(
            ReportText.json(totals, byDay: false, since: 5, until: nil).text
                == #"{"since_ms":5,"until_ms":null,"names":[{"name":"client call","elapsed_ms":11560000},{"name":"café","elapsed_ms":1500000}],"total_ms":13060000}"#
        )
    }

    @Test func reportTextByDay() {
        let totals = ReportTotals(
            names: [],
            days: [
                .init(day: "2026-11-24", names: [.init(name: "a,b", milliseconds: 3_600_000), .init(name: "x", milliseconds: 60_000)], total: 3_660_000),
                .init(day: "2026-11-25", names: [.init(name: "x", milliseconds: 1_830_000)], total: 1_830_000),
            ],
            total: 5_490_000
        )
        #expect(ReportText.human(totals, byDay: true, bars: false) == [
            "DAY         NAME   TIME",
            "2026-11-24  a,b    1:00:00",
            "            x      0:01:00",
            "            total  1:01:00",
            "2026-11-25  x      0:30:30",
            "            total  0:30:30",
            "total              1:31:30",
        ])
        let withBars = ReportText.human(totals, byDay: true, bars: true)
        #expect(withBars.suffix(3) == ["", "2026-11-24  1:01:00  " + String(repeating: "█", count: 20), "2026-11-25  0:30:30  ██████████"])
        #expect(ReportText.csv(totals, byDay: true) == ["day,name,elapsed_ms", "2026-11-24,\"a,b\",3600000", "2026-11-24,x,60000", "2026-11-25,x,1830000"])
        #expect(
            ReportText.json(totals, byDay: true, since: nil, until: 9).text
                == #"{"since_ms":null,"until_ms":9,"days":[{"day":"2026-11-24","names":[{"name":"a,b","elapsed_ms":3600000},{"name":"x","elapsed_ms":60000}],"total_ms":3660000},{"day":"2026-11-25","names":[{"name":"x","elapsed_ms":1830000}],"total_ms":1830000}],"total_ms":5490000}"#
        )
    }

    @Test("by day, the row of parts too long to split: its span in the DAY column (widened), in CSV and JSON as a day is, left out of the chart of days")
    func reportTextWithLongParts() {
        let totals = ReportTotals(
            names: [.init(name: "odd", milliseconds: 7_200_000), .init(name: "x", milliseconds: 60_000)],
            days: [
                .init(day: "1970-01-01/9999-12-31", names: [.init(name: "odd", milliseconds: 7_200_000)], total: 7_200_000, spansDays: true),
                .init(day: "2026-11-24", names: [.init(name: "x", milliseconds: 60_000)], total: 60_000),
            ],
            total: 7_260_000
        )
        #expect(ReportText.human(totals, byDay: true, bars: true) == [
            "DAY                    NAME   TIME",
            "1970-01-01/9999-12-31  odd    2:00:00",
            "                       total  2:00:00",
            "2026-11-24             x      0:01:00",
            "                       total  0:01:00",
            "total                         2:01:00",
            "",
            "2026-11-24  0:01:00  " + String(repeating: "█", count: 20),
        ])
        #expect(ReportText.csv(totals, byDay: true) == ["day,name,elapsed_ms", "1970-01-01/9999-12-31,odd,7200000", "2026-11-24,x,60000"])
        #expect(ReportText.json(totals, byDay: true, since: nil, until: nil).text.contains(#"{"day":"1970-01-01/9999-12-31","names":[{"name":"odd","elapsed_ms":7200000}],"total_ms":7200000}"#))
    }

    @Test func aggregationByNameClipsAndScales() {
        var aggregator = ReportAggregator(since: 1_000, until: 10_000, now: 20_000, byDay: false)
        aggregator.add(Interval(name: "a", startMs: 0, endMs: 2_000, elapsedMs: 2_000))  // 1,000 inside
        aggregator.add(Interval(name: "a", startMs: 9_000, endMs: 11_000, elapsedMs: 2_000))  // 1,000 inside
        aggregator.add(Interval(name: "b", startMs: 2_000, endMs: 6_000, elapsedMs: 2_000))  // clock stepped: half
        aggregator.add(Interval(name: "c", startMs: 8_000, endMs: nil, elapsedMs: 12_000))  // open: to now, 2,000 inside
        aggregator.add(Interval(name: "d", startMs: 10_000, endMs: 12_000, elapsedMs: 2_000))  // outside
        aggregator.add(Interval(name: "café", startMs: 1_000, endMs: 1_500, elapsedMs: 500))
        aggregator.add(Interval(name: "cafe\u{301}", startMs: 1_000, endMs: 1_700, elapsedMs: 700))
        let totals = aggregator.totals
        #expect(totals.names.map(\.name) == ["a", "b", "c", "cafe\u{301}", "café"])
        #expect(totals.names.map(\.milliseconds) == [2_000, 2_000, 2_000, 700, 500])
        #expect(totals.total == 7_200)
        #expect(totals.days.isEmpty)
    }

    @Test func scaledNeverOverflows() {
        #expect(ReportAggregator.scaled(1, .max, 2) == .max / 2)
        #expect(ReportAggregator.scaled(.max - 1, .max, .max) == .max - 1)
        #expect(ReportAggregator.scaled(3, 10, 3) == 10)
    }

    @Test func commandLine() throws {
        guard case .run(let log) = try SwctlInvocation.parse(["log", "tea", "--since", "monday", "--csv"]) else {
            Issue.record("not a run")
            return
        }
        #expect(log.command == .log(name: "tea", HistoryRange(since: .weekday(1), until: nil), .csv))
        guard case .run(let report) = try SwctlInvocation.parse(["--json", "report", "--by", "day", "--until", "today"]) else {
            Issue.record("not a run")
            return
        }
        #expect(report.command == .report(HistoryRange(since: nil, until: .startOfDay(daysAgo: 0)), by: .day, .json) && report.json)
        for bad in [
            ["report", "tea"], ["log", "--since", "soon"], ["report", "--by", "week"], ["log", "--by", "day"],
            ["status", "--since", "today"], ["log", "--csv", "--json"], ["list", "--csv"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try SwctlInvocation.parse(bad) }
        }
    }

    @Test("intervals past the year 9999 are refused as damaged")
    func intervalRange() throws {
        let far = JSONValue.object(["name": .string("x"), "start_ms": .int(0), "end_ms": .int(.max), "elapsed_ms": .int(1)])
        #expect(throws: MalformedMessage.self) { try Interval(json: far) }
        let latest = JSONValue.object(["name": .string("x"), "start_ms": .int(0), "end_ms": .int(Interval.latestMs), "elapsed_ms": .int(1)])
        #expect(try Interval(json: latest).endMs == Interval.latestMs)
    }

    @Test("the help says log's order as the daemon sends it (SPEC §3): as the intervals ended, those still counting last")
    func helpSaysLogOrder() {
        let words = SwctlInvocation.usage.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("in the order they ended, those still counting last"))
    }
}
