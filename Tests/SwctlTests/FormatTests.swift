import StopwatchProtocol
import Testing
import Varlink
@testable import swctl

/// The presentation code of `swctl`: every format for each state, with and without laps and
/// tenths. Expected strings are written out by hand.
@Suite("swctl output formats")
struct FormatTests {
    static let stopped = Stopwatch(name: "default", state: .stopped, elapsedMs: 0)
    static let counting = Stopwatch(name: "default", state: .counting, elapsedMs: 83_456)
    static let countingWithLaps = Stopwatch(
        name: "default", state: .counting, elapsedMs: 83_456, lapsMs: [10_000, 25_550, 61_250]
    )
    static let countingWithOneLap = Stopwatch(name: "x", state: .counting, elapsedMs: 5_000, lapsMs: [2_000])
    static let paused = Stopwatch(name: "work", state: .pause, elapsedMs: 3_723_999)
    static let pausedWithLaps = Stopwatch(
        name: "work", state: .pause, elapsedMs: 3_723_999, lapsMs: [1_800_000, 3_600_100]
    )

    /// One formatted line and the text it must be.
    struct Example: Sendable, CustomTestStringConvertible {
        let stopwatch: Stopwatch
        let tenths: Bool
        let expected: String

        init(_ stopwatch: Stopwatch, tenths: Bool, _ expected: String) {
            self.stopwatch = stopwatch
            self.tenths = tenths
            self.expected = expected
        }

        var testDescription: String { expected }
    }

    // MARK: ElapsedText

    @Test(
        "ElapsedText: H:MM:SS, unpadded hours, truncated tenths, negative clamps to zero",
        arguments: [
            (Int64(0), "0:00:00", "0:00:00.0"),
            (999, "0:00:00", "0:00:00.9"),
            (1_999, "0:00:01", "0:00:01.9"),
            (59_999, "0:00:59", "0:00:59.9"),
            (60_000, "0:01:00", "0:01:00.0"),
            (3_599_999, "0:59:59", "0:59:59.9"),
            (3_600_000, "1:00:00", "1:00:00.0"),
            (3_723_099, "1:02:03", "1:02:03.0"),
            (360_000_000, "100:00:00", "100:00:00.0"),
            (443_045_000, "123:04:05", "123:04:05.0"),
            (Int64.max, "2562047788015:12:55", "2562047788015:12:55.8"),
            (-1, "0:00:00", "0:00:00.0"),
            (-3_600_000, "0:00:00", "0:00:00.0"),
            (Int64.min, "0:00:00", "0:00:00.0"),
        ]
    )
    func elapsedText(milliseconds: Int64, whole: String, withTenths: String) {
        #expect(ElapsedText.string(milliseconds: milliseconds, tenths: false) == whole)
        #expect(ElapsedText.string(milliseconds: milliseconds, tenths: true) == withTenths)
    }

    // MARK: Choosing a format

    @Test("format names and templates are recognized")
    func formatArguments() throws {
        #expect(try WatchFormat(argument: "plain") == .plain)
        #expect(try WatchFormat(argument: "json") == .json)
        #expect(try WatchFormat(argument: "waybar") == .waybar)
        #expect(try WatchFormat(argument: "i3blocks") == .i3blocks)
        #expect(try WatchFormat(argument: "polybar") == .polybar)
        #expect(try WatchFormat(argument: "{name} {elapsed}") == .template(WatchTemplate("{name} {elapsed}")))
        #expect(try WatchFormat(argument: "{{plain}}") == .template(WatchTemplate("{{plain}}")))
        #expect(try WatchFormat(argument: "{{") != .plain)
    }

    @Test("an unknown format name lists the valid ones", arguments: ["xml", "Plain", "", "plain}"])
    func unknownFormat(argument: String) {
        #expect {
            try WatchFormat(argument: argument)
        } throws: { error in
            (error as? WatchFormatError)?.description
                == "unknown format '\(argument)'; use plain, json, waybar, i3blocks, polybar"
                + " or a template like '{name} {elapsed} {state}'"
        }
    }

    @Test("a template with a bad placeholder is refused as a format")
    func badTemplateArgument() {
        #expect(throws: WatchFormatError.self) { try WatchFormat(argument: "{name} {bogus}") }
    }

    // MARK: Templates

    @Test(
        "template errors name the problem and say what to write",
        arguments: [
            ("{foo}", "unknown placeholder {foo} in the format;"
                + " use {name}, {state}, {elapsed}, {elapsed_ms}, {laps}, {last_lap}, {remaining}, {target}, {note}, {phase}, {round}"),
            ("{name} {Elapsed}", "unknown placeholder {Elapsed} in the format;"
                + " use {name}, {state}, {elapsed}, {elapsed_ms}, {laps}, {last_lap}, {remaining}, {target}, {note}, {phase}, {round}"),
            ("{}", "unknown placeholder {} in the format;"
                + " use {name}, {state}, {elapsed}, {elapsed_ms}, {laps}, {last_lap}, {remaining}, {target}, {note}, {phase}, {round}"),
            ("{name} {elapsed", "unclosed placeholder {elapsed in the format;"
                + " close it with } or write {{ for a literal {"),
            ("{name {elapsed}", "unclosed placeholder {name  in the format;"
                + " close it with } or write {{ for a literal {"),
            ("time: {", "unclosed placeholder { in the format; close it with } or write {{ for a literal {"),
            ("{name}}", "unmatched } in the format; write }} for a literal }"),
            ("a } b", "unmatched } in the format; write }} for a literal }"),
        ]
    )
    func templateErrors(template: String, message: String) {
        #expect {
            try WatchTemplate(template)
        } throws: { error in
            (error as? WatchFormatError)?.description == message
        }
    }

    @Test("{{ and }} are literal braces")
    func literalBraces() throws {
        #expect(try WatchTemplate("{{{name}}}").render(Self.counting, tenths: false) == "{default}")
        #expect(try WatchTemplate("{{name}}").render(Self.counting, tenths: false) == "{name}")
        #expect(try WatchTemplate("}}{{").render(Self.counting, tenths: false) == "}{")
        #expect(try WatchTemplate("").render(Self.counting, tenths: false) == "")
    }

    static let everyPlaceholder = "{name}|{state}|{elapsed}|{elapsed_ms}|{laps}|{last_lap}"

    @Test(
        "template: every placeholder",
        arguments: [
            Example(stopped, tenths: false, "default|stopped|0:00:00|0|0|"),
            Example(stopped, tenths: true, "default|stopped|0:00:00.0|0|0|"),
            Example(counting, tenths: false, "default|counting|0:01:23|83456|0|"),
            Example(counting, tenths: true, "default|counting|0:01:23.4|83456|0|"),
            Example(countingWithLaps, tenths: false, "default|counting|0:01:23|83456|3|0:01:01"),
            Example(countingWithLaps, tenths: true, "default|counting|0:01:23.4|83456|3|0:01:01.2"),
            Example(paused, tenths: false, "work|pause|1:02:03|3723999|0|"),
            Example(paused, tenths: true, "work|pause|1:02:03.9|3723999|0|"),
            Example(pausedWithLaps, tenths: false, "work|pause|1:02:03|3723999|2|1:00:00"),
            Example(pausedWithLaps, tenths: true, "work|pause|1:02:03.9|3723999|2|1:00:00.1"),
        ]
    )
    func templateLine(example: Example) throws {
        let format = try WatchFormat(argument: Self.everyPlaceholder)
        #expect(format.line(for: example.stopwatch, tenths: example.tenths) == example.expected)
        let template = try WatchTemplate(Self.everyPlaceholder)
        #expect(template.render(example.stopwatch, tenths: example.tenths) == example.expected)
    }

    @Test("template: the example from the manual, and non-ASCII text kept as is")
    func templateExample() throws {
        let format = try WatchFormat(argument: "{name} {elapsed} {state}")
        #expect(format.line(for: Self.paused, tenths: false) == "work 1:02:03 pause")
        let clock = try WatchFormat(argument: "⏱ {elapsed} ({laps})")
        #expect(clock.line(for: Self.countingWithLaps, tenths: true) == "⏱ 0:01:23.4 (3)")
    }

    // MARK: Formats, state by state

    @Test(
        "plain",
        arguments: [
            Example(stopped, tenths: false, "default stopped 0:00:00"),
            Example(stopped, tenths: true, "default stopped 0:00:00.0"),
            Example(counting, tenths: false, "default counting 0:01:23"),
            Example(counting, tenths: true, "default counting 0:01:23.4"),
            Example(countingWithLaps, tenths: false, "default counting 0:01:23 (3 laps)"),
            Example(countingWithLaps, tenths: true, "default counting 0:01:23.4 (3 laps)"),
            Example(countingWithOneLap, tenths: false, "x counting 0:00:05 (1 lap)"),
            Example(paused, tenths: false, "work paused 1:02:03"),
            Example(paused, tenths: true, "work paused 1:02:03.9"),
            Example(pausedWithLaps, tenths: false, "work paused 1:02:03 (2 laps)"),
            Example(pausedWithLaps, tenths: true, "work paused 1:02:03.9 (2 laps)"),
        ]
    )
    func plain(example: Example) {
        #expect(WatchFormat.plain.line(for: example.stopwatch, tenths: example.tenths) == example.expected)
    }

    @Test(
        "json: the Stopwatch object, whatever the tenths",
        arguments: [
            Example(stopped, tenths: false, #"{"name":"default","state":"stopped","elapsed_ms":0,"laps_ms":[]}"#),
            Example(stopped, tenths: true, #"{"name":"default","state":"stopped","elapsed_ms":0,"laps_ms":[]}"#),
            Example(counting, tenths: false, #"{"name":"default","state":"counting","elapsed_ms":83456,"laps_ms":[]}"#),
            Example(
                countingWithLaps, tenths: true,
                #"{"name":"default","state":"counting","elapsed_ms":83456,"laps_ms":[10000,25550,61250]}"#
            ),
            Example(paused, tenths: false, #"{"name":"work","state":"pause","elapsed_ms":3723999,"laps_ms":[]}"#),
            Example(
                pausedWithLaps, tenths: false,
                #"{"name":"work","state":"pause","elapsed_ms":3723999,"laps_ms":[1800000,3600100]}"#
            ),
        ]
    )
    func json(example: Example) {
        #expect(WatchFormat.json.line(for: example.stopwatch, tenths: example.tenths) == example.expected)
    }

    @Test(
        "waybar: text, tooltip, class = wire state",
        arguments: [
            Example(
                stopped, tenths: false,
                #"{"text":"0:00:00","tooltip":"default: stopped at 0:00:00","class":"stopped"}"#
            ),
            Example(
                stopped, tenths: true,
                #"{"text":"0:00:00.0","tooltip":"default: stopped at 0:00:00.0","class":"stopped"}"#
            ),
            Example(
                counting, tenths: false,
                #"{"text":"0:01:23","tooltip":"default: counting at 0:01:23","class":"counting"}"#
            ),
            Example(
                counting, tenths: true,
                #"{"text":"0:01:23.4","tooltip":"default: counting at 0:01:23.4","class":"counting"}"#
            ),
            Example(
                countingWithLaps, tenths: false,
                #"{"text":"0:01:23","tooltip":"default: counting at 0:01:23, 3 laps","class":"counting"}"#
            ),
            Example(
                countingWithOneLap, tenths: false,
                #"{"text":"0:00:05","tooltip":"x: counting at 0:00:05, 1 lap","class":"counting"}"#
            ),
            Example(paused, tenths: false, #"{"text":"1:02:03","tooltip":"work: paused at 1:02:03","class":"pause"}"#),
            Example(
                paused, tenths: true,
                #"{"text":"1:02:03.9","tooltip":"work: paused at 1:02:03.9","class":"pause"}"#
            ),
            Example(
                pausedWithLaps, tenths: false,
                #"{"text":"1:02:03","tooltip":"work: paused at 1:02:03, 2 laps","class":"pause"}"#
            ),
            Example(
                pausedWithLaps, tenths: true,
                #"{"text":"1:02:03.9","tooltip":"work: paused at 1:02:03.9, 2 laps","class":"pause"}"#
            ),
        ]
    )
    func waybar(example: Example) {
        #expect(WatchFormat.waybar.line(for: example.stopwatch, tenths: example.tenths) == example.expected)
    }

    static let barExamples = [
        Example(stopped, tenths: false, "0:00:00 stopped"),
        Example(stopped, tenths: true, "0:00:00.0 stopped"),
        Example(counting, tenths: false, "0:01:23"),
        Example(counting, tenths: true, "0:01:23.4"),
        Example(countingWithLaps, tenths: false, "0:01:23"),
        Example(paused, tenths: false, "1:02:03 paused"),
        Example(paused, tenths: true, "1:02:03.9 paused"),
        Example(pausedWithLaps, tenths: false, "1:02:03 paused"),
    ]

    @Test("i3blocks and polybar: elapsed, then the state unless counting", arguments: barExamples)
    func bars(example: Example) {
        #expect(WatchFormat.i3blocks.line(for: example.stopwatch, tenths: example.tenths) == example.expected)
        #expect(WatchFormat.polybar.line(for: example.stopwatch, tenths: example.tenths) == example.expected)
    }

    // MARK: Escaping

    /// Quotes, a backslash, non-ASCII and a control character: JSON must escape the first two
    /// and the last, and keep the rest as UTF-8.
    static let awkward = Stopwatch(name: "a\"b\\c ü😀\u{1}", state: .counting, elapsedMs: 1_000)

    @Test("names with quotes, backslashes and non-ASCII are escaped in json and waybar")
    func escaping() {
        #expect(
            WatchFormat.json.line(for: Self.awkward, tenths: false)
                == #"{"name":"a\"b\\c ü😀\u0001","state":"counting","elapsed_ms":1000,"laps_ms":[]}"#
        )
        #expect(
            WatchFormat.waybar.line(for: Self.awkward, tenths: false)
                == #"{"text":"0:00:01","tooltip":"a&quot;b\\c ü😀\u0001: counting at 0:00:01","class":"counting"}"#
        )
        #expect(WatchFormat.i3blocks.line(for: Self.awkward, tenths: false) == "0:00:01")
    }

    @Test(
        "waybar lines parse back to exactly text, tooltip and class, in that order",
        arguments: [stopped, counting, countingWithLaps, paused, pausedWithLaps, awkward]
    )
    func waybarParses(stopwatch: Stopwatch) throws {
        let line = WatchFormat.waybar.line(for: stopwatch, tenths: true)
        guard case .object(let object) = try JSONParser.parse(line) else {
            Issue.record("not a JSON object: \(line)")
            return
        }
        #expect(object.keys == ["text", "tooltip", "class"])
        #expect(object["text"] == .string(ElapsedText.string(milliseconds: stopwatch.elapsedMs, tenths: true)))
        #expect(object["class"] == .string(stopwatch.state.rawValue))
        guard case .string(let tooltip)? = object["tooltip"] else {
            Issue.record("tooltip is not a string: \(line)")
            return
        }
        #expect(tooltip.hasPrefix(PangoMarkup.escaped(stopwatch.name) + ": "))
    }

    @Test("json lines and unavailable lines parse back", arguments: [stopped, countingWithLaps, awkward])
    func jsonParses(stopwatch: Stopwatch) throws {
        let line = WatchFormat.json.line(for: stopwatch, tenths: false)
        #expect(try Stopwatch(json: JSONParser.parse(line)) == stopwatch)
        let unavailable = WatchFormat.waybar.unavailableLine(name: stopwatch.name, reason: stopwatch.name)
        #expect(
            try JSONParser.parse(unavailable) == .object([
                "text": .string("--:--:--"),
                "tooltip": .string(PangoMarkup.escaped("stopwatchd unavailable: " + stopwatch.name)),
                "class": .string("unavailable"),
            ])
        )
        #expect(
            try JSONParser.parse(WatchFormat.json.unavailableLine(name: stopwatch.name, reason: stopwatch.name))
                == .object(["error": .string("unavailable"), "reason": .string(stopwatch.name)])
        )
    }

    /// A name as people now write them, with every character some output format gives a
    /// meaning to: JSON, Pango markup, polybar tags, templates.
    static let markup = Stopwatch(name: #"R&D <b>"x" 'y' \ 100% %{F#f00} {elapsed}"#, state: .pause, elapsedMs: 2_000)

    @Test("waybar: the name is Pango-escaped inside JSON; the text has no name")
    func waybarMarkup() throws {
        let line = WatchFormat.waybar.line(for: Self.markup, tenths: false)
        #expect(line.hasPrefix(#"{"text":"0:00:02","tooltip":"R&amp;D &lt;b&gt;"#))
        guard case .object(let object) = try JSONParser.parse(line), case .string(let tooltip)? = object["tooltip"] else {
            Issue.record("not a waybar line: \(line)")
            return
        }
        #expect(tooltip == #"R&amp;D &lt;b&gt;&quot;x&quot; &apos;y&apos; \ 100% %{F#f00} {elapsed}: paused at 0:00:02"#)
        #expect(PangoMarkup.escaped("plain café") == "plain café")
        #expect(PangoMarkup.escaped("&amp;") == "&amp;amp;")
    }

    @Test("i3blocks and polybar lines never carry the name, so no `%{` tag or markup from it")
    func barsWithoutName() {
        for format in [WatchFormat.i3blocks, .polybar] {
            #expect(format.line(for: Self.markup, tenths: false) == "0:00:02 paused")
            #expect(format.unavailableLine(name: Self.markup.name, reason: "gone") == "--:--:--")
        }
    }

    @Test("a template puts a name holding `{elapsed}` in literally, once")
    func templateNameIsLiteral() throws {
        let template = try WatchFormat(argument: "[{name}] {elapsed}")
        #expect(template.line(for: Self.markup, tenths: false) == #"[R&D <b>"x" 'y' \ 100% %{F#f00} {elapsed}] 0:00:02"#)
        #expect(
            template.unavailableLine(name: "{state}{{", reason: "gone") == "[{state}{{] --:--:--"
        )
    }

    @Test("status and list never print a control character a daemon put in a name")
    func controlCharactersShown() {
        let hostile = Stopwatch(name: "a\u{1B}[2Jb", state: .stopped, elapsedMs: 0)
        #expect(StatusText.summary(of: hostile, tenths: false) == #"a\u{1B}[2Jb stopped 0:00:00"#)
        #expect(StatusText.table([hostile], tenths: false).allSatisfy { !$0.unicodeScalars.contains(where: StopwatchName.isControl) })
    }

    @Test("watch on a terminal: a line wider than the window is cut to it, ending in …, so a redraw never wraps")
    func redrawnLineCutToWidth() {
        let long = StatusText.summary(
            of: Stopwatch(name: "work", state: .counting, elapsedMs: 61_000, note: String(repeating: "the parser ", count: 20)), tenths: false
        )
        let cut = TerminalWidth.cut(long, to: 40)
        #expect(TerminalWidth.of(cut) == 40)
        #expect(cut.hasPrefix("work counting 0:01:01 \"the parser"))
        #expect(cut.hasSuffix("…"))
        // What fits is left as it is, up to exactly the width.
        #expect(TerminalWidth.cut("work counting 0:01:01", to: 21) == "work counting 0:01:01")
        #expect(TerminalWidth.cut("work counting 0:01:01", to: 20) == "work counting 0:01:…")
        // Whole characters: a wide one that would cross the edge goes, combining marks stay.
        #expect(TerminalWidth.cut("ab タイマー", to: 6) == "ab タ…")
        #expect(TerminalWidth.cut("ab タイマー", to: 7) == "ab タ…")
        #expect(TerminalWidth.cut("cafe\u{301}s", to: 5) == "cafe\u{301}s")
        #expect(TerminalWidth.cut("cafe\u{301}s!", to: 5) == "cafe\u{301}…")
        #expect(TerminalWidth.cut("abc", to: 0) == "")
    }

    @Test("list: columns line up in terminal cells, CJK and emoji two, combining accents none")
    func tableWidths() {
        #expect(TerminalWidth.of("タイマー") == 8)
        #expect(TerminalWidth.of("cafe\u{301}") == 4)
        #expect(TerminalWidth.of("😀 a") == 4)
        #expect(TerminalWidth.of("client call") == 11)
        let table = StatusText.table([
            Stopwatch(name: "タイマー", state: .counting, elapsedMs: 1_000),
            Stopwatch(name: "cafe\u{301}", state: .stopped, elapsedMs: 0),
            Stopwatch(name: "client call", state: .pause, elapsedMs: 2_000),
        ], tenths: false)
        #expect(table == [
            "NAME         STATE     ELAPSED  LAPS",
            "タイマー     counting  0:00:01     0",
            "cafe\u{301}         stopped   0:00:00     0",
            "client call  paused    0:00:02     0",
        ])
    }

    // MARK: Unavailable daemon

    static let reason = #"no daemon at "/run/user/1000/stopwatchd/stopwatchd.sock""#

    @Test("unavailable lines, in each format")
    func unavailable() throws {
        #expect(
            WatchFormat.plain.unavailableLine(name: "work", reason: Self.reason)
                == #"stopwatchd unavailable: no daemon at "/run/user/1000/stopwatchd/stopwatchd.sock""#
        )
        #expect(
            WatchFormat.json.unavailableLine(name: "work", reason: Self.reason)
                == #"{"error":"unavailable","reason":"no daemon at \"/run/user/1000/stopwatchd/stopwatchd.sock\""}"#
        )
        #expect(
            WatchFormat.waybar.unavailableLine(name: "work", reason: "connection refused")
                == #"{"text":"--:--:--","tooltip":"stopwatchd unavailable: connection refused","class":"unavailable"}"#
        )
        #expect(
            WatchFormat.waybar.unavailableLine(name: "work", reason: #"a\b"#)
                == #"{"text":"--:--:--","tooltip":"stopwatchd unavailable: a\\b","class":"unavailable"}"#
        )
        #expect(WatchFormat.i3blocks.unavailableLine(name: "work", reason: Self.reason) == "--:--:--")
        #expect(WatchFormat.polybar.unavailableLine(name: "work", reason: Self.reason) == "--:--:--")
        let template = try WatchFormat(argument: "{name} {elapsed} {state} [{elapsed_ms}|{laps}|{last_lap}] {{}}")
        #expect(template.unavailableLine(name: "work", reason: Self.reason) == "work --:--:-- unavailable [||] {}")
    }

    // MARK: status and list

    @Test("status: the stopwatch, then each lap with its split and its own time")
    func statusWithLaps() {
        #expect(
            StatusText.lines(for: Self.countingWithLaps, tenths: false) == [
                "default counting 0:01:23 (3 laps)",
                "  lap 1  0:00:10  (+0:00:10)",
                "  lap 2  0:00:25  (+0:00:15)",
                "  lap 3  0:01:01  (+0:00:35)",
            ]
        )
        #expect(
            StatusText.lines(for: Self.countingWithLaps, tenths: true) == [
                "default counting 0:01:23.4 (3 laps)",
                "  lap 1  0:00:10.0  (+0:00:10.0)",
                "  lap 2  0:00:25.5  (+0:00:15.5)",
                "  lap 3  0:01:01.2  (+0:00:35.7)",
            ]
        )
    }

    @Test("status: the note of the interval counting, quoted and printable; a clock that skips sleep is said beside the laps")
    func statusNoteAndSleep() {
        var work = Stopwatch(name: "work", state: .counting, elapsedMs: 83_456, lapsMs: [10_000], countsSleep: false, note: "fix \"it\"\u{1B}")
        #expect(StatusText.summary(of: work, tenths: false) == #"work counting 0:01:23 (1 lap, skips sleep) "fix "it"\u{1B}""#)
        work.lapsMs = []
        work.note = nil
        #expect(StatusText.summary(of: work, tenths: false) == "work counting 0:01:23 (skips sleep)")
        #expect(StatusText.summary(of: Self.counting, tenths: false) == "default counting 0:01:23")
        work.note = "review"
        #expect(WatchFormat.plain.line(for: work, tenths: false) == #"work counting 0:01:23 (skips sleep) "review""#)
        #expect((try? WatchTemplate("{name}: {note}").render(work, tenths: false)) == "work: review")
        #expect((try? WatchTemplate("{name}: {note}").render(Self.counting, tenths: false)) == "default: ")
        #expect(WatchFormat.waybar.line(for: work, tenths: false).contains(#""tooltip":"work: counting at 0:01:23\nreview""#))
    }

    @Test("status without laps is one line, as plain")
    func statusWithoutLaps() {
        #expect(StatusText.lines(for: Self.stopped, tenths: false) == ["default stopped 0:00:00"])
        #expect(StatusText.lines(for: Self.paused, tenths: true) == ["work paused 1:02:03.9"])
    }

    @Test("status: lap numbers and splits of different widths line up")
    func statusAlignment() {
        let manyLaps = Stopwatch(name: "default", state: .pause, elapsedMs: 10_500, lapsMs: (1...10).map { $0 * 1_000 })
        let lines = StatusText.lines(for: manyLaps, tenths: false)
        #expect(lines.count == 11)
        #expect(lines[1] == "  lap  1  0:00:01  (+0:00:01)")
        #expect(lines[10] == "  lap 10  0:00:10  (+0:00:01)")

        let longLaps = Stopwatch(name: "default", state: .pause, elapsedMs: 36_100_000, lapsMs: [59_000, 36_061_000])
        #expect(
            StatusText.lines(for: longLaps, tenths: false) == [
                "default paused 10:01:40 (2 laps)",
                "  lap 1   0:00:59  (+0:00:59)",
                "  lap 2  10:01:01  (+10:00:02)",
            ]
        )
    }

    @Test("list: aligned columns under a header")
    func table() {
        let stopwatches = [
            Stopwatch(name: "default", state: .counting, elapsedMs: 83_456, lapsMs: [10_000, 25_550, 61_250]),
            Stopwatch(name: "long-name.1", state: .pause, elapsedMs: 443_045_000),
            Stopwatch(name: "w", state: .stopped, elapsedMs: 0),
        ]
        #expect(
            StatusText.table(stopwatches, tenths: false) == [
                "NAME         STATE       ELAPSED  LAPS",
                "default      counting    0:01:23     3",
                "long-name.1  paused    123:04:05     0",
                "w            stopped     0:00:00     0",
            ]
        )
        #expect(
            StatusText.table([Self.counting], tenths: true) == [
                "NAME     STATE       ELAPSED  LAPS",
                "default  counting  0:01:23.4     0",
            ]
        )
    }

    @Test("list of nothing")
    func emptyTable() {
        #expect(StatusText.table([], tenths: false) == ["no stopwatches"])
        #expect(StatusText.table([], tenths: true) == ["no stopwatches"])
    }
}
