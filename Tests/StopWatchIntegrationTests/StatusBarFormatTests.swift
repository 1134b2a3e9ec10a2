import Foundation
import StopwatchProtocol
import StopwatchdClient
import Testing
import Varlink

/// What a status bar reading `swctl watch --format waybar|i3blocks|polybar` gets from the real
/// binaries: the shape of each line in each state, one line per update, flushed as it
/// happens, and the line for a daemon that cannot be reached. (`FormatTests` checks the exact
/// strings of the formatting code; `WatchTests` streaming and reconnecting with ticks.)
///
/// Most tests run a daemon whose tick is an hour away, so that only commands produce updates:
/// each command must then be exactly the next line, and a line that arrives at all while
/// `swctl` keeps running was flushed (a block-buffered pipe would hold these short lines back
/// until kilobytes had accumulated). Shapes are matched, never clock values.
@Suite("status bar formats, end to end")
struct StatusBarFormatTests {
    /// No tick within any test's lifetime: updates come from commands only.
    static let noTicks = ["--tick", "1h"]
    static let timeout: Duration = .seconds(60)

    /// The line `watch` prints next, failing the test when none comes in time or `swctl` ended.
    static func nextLine(_ watch: SwctlProcess, after step: String) throws -> String {
        let line = try #require(watch.lines.next(timeout: timeout), "no line from swctl watch after \(step)")
        #expect(watch.isRunning, "swctl watch ended after \(step)")
        return line
    }

    /// `line` parsed as a waybar object: exactly `text`, `tooltip` and `class`, in that order.
    static func waybarFields(_ line: String) throws -> (text: String, tooltip: String, class: String) {
        guard case .object(let object) = try JSONParser.parse(line) else {
            Issue.record("not a JSON object: \(line)")
            throw WaybarLineError(line: line)
        }
        #expect(object.keys == ["text", "tooltip", "class"], "keys of \(line)")
        guard case .string(let text)? = object["text"], case .string(let tooltip)? = object["tooltip"],
            case .string(let className)? = object["class"]
        else {
            Issue.record("text, tooltip and class must be strings: \(line)")
            throw WaybarLineError(line: line)
        }
        return (text, tooltip, className)
    }

    struct WaybarLineError: Error {
        let line: String
    }

    // MARK: Waybar

    @Test("waybar: one whole JSON object per update, class = state (stopped, counting, pause)")
    func waybarStates() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: Self.noTicks)
        defer { withExtendedLifetime((directory, daemon)) {} }
        let client = StopwatchClient(socketPath: daemon.socket)
        let watch = try SwctlProcess(["watch", "bar", "--format", "waybar"], socket: daemon.socket)

        // Never started: stopped at zero, exactly.
        var line = try Self.nextLine(watch, after: "connecting")
        #expect(line == #"{"text":"0:00:00","tooltip":"bar: stopped at 0:00:00","class":"stopped"}"#)

        // Each command, then the class and tooltip its line must have.
        let steps: [(name: String, command: () throws -> Stopwatch, class: String, tooltip: Regex<Substring>)] = [
            ("start", { try client.start("bar") }, "counting", /bar: counting at \d+:\d\d:\d\d/),
            ("lap", { try client.lap("bar") }, "counting", /bar: counting at \d+:\d\d:\d\d, 1 lap/),
            ("stop", { try client.stop("bar") }, "pause", /bar: paused at \d+:\d\d:\d\d, 1 lap/),
            ("toggle (resume)", { try client.toggle("bar") }, "counting", /bar: counting at \d+:\d\d:\d\d, 1 lap/),
            ("lap", { try client.lap("bar") }, "counting", /bar: counting at \d+:\d\d:\d\d, 2 laps/),
            ("toggle (pause)", { try client.toggle("bar") }, "pause", /bar: paused at \d+:\d\d:\d\d, 2 laps/),
        ]
        for step in steps {
            _ = try step.command()
            line = try Self.nextLine(watch, after: step.name)
            let fields = try Self.waybarFields(line)
            #expect(fields.class == step.class, "after \(step.name): \(line)")
            #expect(fields.text.wholeMatch(of: /\d+:\d\d:\d\d/) != nil, "after \(step.name): \(line)")
            #expect(fields.tooltip.wholeMatch(of: step.tooltip) != nil, "after \(step.name): \(line)")
            #expect(fields.tooltip.hasSuffix(fields.text) || fields.tooltip.contains(fields.text + ", "))
        }

        // Reset: back to the very line of a stopwatch never started, laps gone.
        _ = try client.reset("bar")
        line = try Self.nextLine(watch, after: "reset")
        #expect(line == #"{"text":"0:00:00","tooltip":"bar: stopped at 0:00:00","class":"stopped"}"#)

        // No-op commands change nothing, so they print nothing: the next line is the next change.
        _ = try client.stop("bar")
        _ = try client.reset("bar")
        _ = try client.start("bar")
        line = try Self.nextLine(watch, after: "stop, reset (no-ops), start")
        #expect(try Self.waybarFields(line).class == "counting")
    }

    @Test("waybar, with no daemon: the unavailable object once, then the state when one starts")
    func waybarUnavailable() throws {
        let directory = try TestDirectory()
        defer { withExtendedLifetime(directory) {} }
        let watch = try SwctlProcess(["watch", "bar", "--format", "waybar"], socket: directory.socket)

        let line = try Self.nextLine(watch, after: "connecting to no daemon")
        let fields = try Self.waybarFields(line)
        #expect(fields.text == "--:--:--")
        #expect(fields.class == "unavailable")
        #expect(fields.tooltip.hasPrefix("stopwatchd unavailable: ") && fields.tooltip.count > 24, "\(line)")

        // Said once: the first line after a daemon appears is the stopwatch, not another notice.
        let daemon = try DaemonProcess(socket: directory.socket, arguments: Self.noTicks)
        defer { withExtendedLifetime(daemon) {} }
        #expect(
            try Self.nextLine(watch, after: "the daemon started")
                == #"{"text":"0:00:00","tooltip":"bar: stopped at 0:00:00","class":"stopped"}"#
        )
    }

    // MARK: i3blocks and polybar

    @Test("i3blocks and polybar: elapsed alone while counting, else elapsed and the state word", arguments: ["i3blocks", "polybar"])
    func barStates(format: String) throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: Self.noTicks)
        defer { withExtendedLifetime((directory, daemon)) {} }
        let client = StopwatchClient(socketPath: daemon.socket)
        let watch = try SwctlProcess(["watch", "bar", "--format", format], socket: daemon.socket)

        var lines = [try Self.nextLine(watch, after: "connecting")]
        #expect(lines[0] == "0:00:00 stopped")
        _ = try client.start("bar")
        lines.append(try Self.nextLine(watch, after: "start"))
        #expect(lines.last?.wholeMatch(of: /\d+:\d\d:\d\d/) != nil, "\(lines)")
        // A lap is an update of its own, even though these formats do not show laps.
        _ = try client.lap("bar")
        lines.append(try Self.nextLine(watch, after: "lap"))
        #expect(lines.last?.wholeMatch(of: /\d+:\d\d:\d\d/) != nil, "\(lines)")
        _ = try client.stop("bar")
        lines.append(try Self.nextLine(watch, after: "stop"))
        #expect(lines.last?.wholeMatch(of: /\d+:\d\d:\d\d paused/) != nil, "\(lines)")
        _ = try client.reset("bar")
        lines.append(try Self.nextLine(watch, after: "reset"))
        #expect(lines.last == "0:00:00 stopped")

        // Bars with little room and no guaranteed Unicode font: ASCII, no name, no markup.
        for line in lines {
            #expect(line.allSatisfy { $0.isASCII && !$0.isNewline }, "\(line)")
            #expect(!line.contains("bar") && !line.contains("<") && !line.contains("%{"), "\(line)")
        }
    }

    @Test("with no daemon, each format prints its unavailable line once, then the state when one starts", arguments: [
        ("i3blocks", "0:00:00 stopped"),
        ("polybar", "0:00:00 stopped"),
        ("plain", "bar stopped 0:00:00"),
        ("json", #"{"name":"bar","state":"stopped","elapsed_ms":0,"laps_ms":[]}"#),
        ("{name} {elapsed} {state}", "bar 0:00:00 stopped"),
    ])
    func unavailable(format: String, stateLine: String) throws {
        let directory = try TestDirectory()
        defer { withExtendedLifetime(directory) {} }
        let watch = try SwctlProcess(["watch", "bar", "--format", format], socket: directory.socket)

        let line = try Self.nextLine(watch, after: "connecting to no daemon")
        switch format {
        case "i3blocks", "polybar":
            #expect(line == "--:--:--")
        case "plain":
            #expect(line.hasPrefix("stopwatchd unavailable: ") && line.count > 24, "\(line)")
        case "json":
            guard case .object(let object) = try JSONParser.parse(line) else {
                Issue.record("not a JSON object: \(line)")
                return
            }
            #expect(object.keys == ["error", "reason"] && object["error"] == .string("unavailable"), "\(line)")
        default:
            #expect(line == "bar --:--:-- unavailable")
        }

        let daemon = try DaemonProcess(socket: directory.socket, arguments: Self.noTicks)
        defer { withExtendedLifetime(daemon) {} }
        #expect(try Self.nextLine(watch, after: "the daemon started") == stateLine)
    }

    @Test("i3blocks and polybar: a daemon killed outright shows --:--:--, then the time again", arguments: ["i3blocks", "polybar"])
    func daemonKilled(format: String) throws {
        let directory = try TestDirectory()
        defer { withExtendedLifetime(directory) {} }
        var daemon: DaemonProcess? = try DaemonProcess(socket: directory.socket, arguments: Self.noTicks)
        _ = try StopwatchClient(socketPath: directory.socket).start("bar")
        let watch = try SwctlProcess(["watch", "bar", "--format", format], socket: directory.socket)
        #expect(try Self.nextLine(watch, after: "connecting").wholeMatch(of: /\d+:\d\d:\d\d/) != nil)

        // SIGKILL leaves the socket file behind: reconnecting meets a refusal, not a missing file.
        #expect(daemon?.stop(SIGKILL) == 128 + SIGKILL)
        daemon = nil
        #expect(try Self.nextLine(watch, after: "the daemon was killed") == "--:--:--")

        // The stopwatch kept counting through the outage: the next line is a time, not a notice.
        daemon = try DaemonProcess(socket: directory.socket, arguments: Self.noTicks)
        defer { withExtendedLifetime(daemon) {} }
        #expect(try Self.nextLine(watch, after: "the daemon restarted").wholeMatch(of: /\d+:\d\d:\d\d/) != nil)
    }

    // MARK: Ticks

    @Test(
        "with $STOPWATCHD_TICK under a second, every line has tenths from the first: a constant width",
        arguments: ["waybar", "i3blocks", "polybar"]
    )
    func tenthsFromTheStart(format: String) throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "100ms"])
        defer { withExtendedLifetime((directory, daemon)) {} }
        let watch = try SwctlProcess(
            ["watch", "bar", "--format", format], socket: daemon.socket, environment: ["STOPWATCHD_TICK": "100ms"]
        )
        let first = try Self.nextLine(watch, after: "connecting")
        _ = try StopwatchClient(socketPath: daemon.socket).start("bar")
        var lines = [first]
        while lines.count < 8 {
            lines.append(try Self.nextLine(watch, after: "\(lines.count - 1) ticks"))
        }
        let times = try lines.map { line in
            format == "waybar" ? try Self.waybarFields(line).text : String(line.prefix { $0 != " " })
        }
        #expect(lines[0] == (format == "waybar"
            ? #"{"text":"0:00:00.0","tooltip":"bar: stopped at 0:00:00.0","class":"stopped"}"#
            : "0:00:00.0 stopped"))
        for (time, line) in zip(times, lines) {
            #expect(time.wholeMatch(of: /\d:\d\d:\d\d\.\d/) != nil, "\(line)")
        }
        #expect(Set(times.map(\.count)).count == 1, "\(times)")
    }
}
