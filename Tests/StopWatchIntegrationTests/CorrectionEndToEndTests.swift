import Foundation
import LinuxSystem
import StopwatchProtocol
import TestSupport
import Testing
import Varlink

/// Correcting the record end to end (SPEC §3 "Times in the past", "Corrections"; §5
/// "Correcting the record"): what `swctl` sends, what the daemon keeps, what `log` and
/// `report` then say, and that a crash keeps every answered correction.
@Suite("correcting the record: swctl against the daemon")
struct CorrectionEndToEndTests {
    let directory: TestDirectory
    /// Local time is UTC here, so that `HH:MM` and dates in arguments are plain to check.
    static let utc = ["TZ": "UTC"]

    init() throws {
        directory = try TestDirectory()
    }

    func swctl(_ arguments: [String]) throws -> Swctl {
        try Swctl.run(arguments, socket: directory.socket, environment: Self.utc)
    }

    /// Runs `arguments`, which must succeed.
    @discardableResult
    func succeed(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> Swctl {
        let result = try swctl(arguments)
        #expect(result.status == 0, "swctl \(arguments.joined(separator: " ")): \(result.error)", sourceLocation: sourceLocation)
        return result
    }

    func log(_ arguments: [String] = []) throws -> [Interval] {
        let result = try succeed(["--json", "log"] + arguments)
        guard case .array(let items) = try JSONParser.parse(result.output.trimmingCharacters(in: .newlines)) else {
            Issue.record("log --json printed no array: \(result.output)")
            return []
        }
        return try items.map { try Interval(json: $0) }
    }

    /// The total `report --json` gives over `since`.., in milliseconds.
    func reportTotal(since: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int64 {
        let result = try succeed(["--json", "report", "--since", since], sourceLocation: sourceLocation)
        guard case .object(let report) = try JSONParser.parse(result.output.trimmingCharacters(in: .newlines)),
            case .int(let total)? = report["total_ms"]
        else {
            Issue.record("report --json printed no total: \(result.output)", sourceLocation: sourceLocation)
            return -1
        }
        return total
    }

    func interval(_ result: Swctl) throws -> Interval {
        try Interval(json: try JSONParser.parse(result.output.trimmingCharacters(in: .newlines)))
    }

    func stopwatch(_ result: Swctl) throws -> Stopwatch {
        try Stopwatch(json: try JSONParser.parse(result.output.trimmingCharacters(in: .newlines)))
    }

    static func nowMs() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Yesterday's date, `YYYY-MM-DD` (UTC).
    static var yesterday: String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: Date().addingTimeInterval(-86_400))
    }

    @Test("start 10 minutes ago with a note, stop 2 minutes ago: the interval ends then, 8 minutes long, with its note")
    func stopInThePast() throws {
        let daemon = try DaemonProcess(socket: directory.socket)
        let before = Self.nowMs()
        let started = try stopwatch(try succeed(["--json", "start", "work", "--at", "10m", "--note", "standup, then the review"]))
        let afterStart = Self.nowMs()
        // A Start 10 minutes ago reads 10 minutes now (swctl reads "now" itself, between
        // `before` and its reply), and shows its note while it counts.
        #expect(started.state == .counting && started.note == "standup, then the review")
        #expect((600_000 - 1_000...600_000 + (afterStart - before) + 1_000).contains(started.elapsedMs), "\(started)")
        let stopped = try stopwatch(try succeed(["--json", "stop", "work", "--at", "2m"]))
        let after = Self.nowMs()
        #expect(stopped.state == .pause && stopped.note == nil)
        // 8 minutes, and the time between the two commands' "now"s.
        #expect((480_000 - 1_000...480_000 + (after - before) + 1_000).contains(stopped.elapsedMs), "\(stopped)")
        let intervals = try log(["--since", "1h"])
        try #require(intervals.count == 1, "\(intervals)")
        let interval = intervals[0]
        let end = try #require(interval.endMs)
        // Ends two minutes before the stop was typed, and counts two minutes less than the
        // time from its start to now.
        #expect((before - 120_000 - 1_000...after - 120_000 + 1_000).contains(end), "\(interval)")
        #expect((-1_000...(after - before) + 1_000).contains((after - interval.startMs - 120_000) - interval.elapsedMs), "\(interval)")
        #expect(interval.elapsedMs == end - interval.startMs)
        #expect(IntervalID.isValid(interval.id), "\(interval.id)")
        // The note went with the interval into the history.
        #expect(interval.note == "standup, then the review")
        _ = daemon
    }

    /// A local time `minutes` minutes before now, to the minute, as WHEN takes it (UTC here).
    static func minutesAgo(_ minutes: Int) -> String {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm"
        return formatter.string(from: Date().addingTimeInterval(-Double(minutes) * 60))
    }

    @Test("a start and a stop dated to the minute are exactly their difference apart, in the reply, log and report")
    func datedTransitionsAreExact() throws {
        let daemon = try DaemonProcess(socket: directory.socket)
        let from = Self.minutesAgo(185), to = Self.minutesAgo(60)
        try succeed(["start", "work", "--at", from])
        let stopped = try stopwatch(try succeed(["--json", "stop", "work", "--at", to]))
        // The clocks are read a fraction of a millisecond apart at each command: whole
        // milliseconds all the same, not 2:04:59.999.
        #expect(stopped.elapsedMs == 125 * 60_000, "\(stopped)")
        let interval = try #require(try log(["--since", "2000-01-01"]).first)
        #expect(interval.elapsedMs == 125 * 60_000 && interval.endMs! - interval.startMs == 125 * 60_000, "\(interval)")
        #expect(interval.startMs % 60_000 == 0, "\(interval)")
        #expect(try reportTotal(since: "2000-01-01") == 125 * 60_000)
        _ = daemon
    }

    @Test("a stop at an instant before another interval's end: log lists in end order, and its numbers are the ones @N names, with and without --since")
    func stopBeforeAnotherEndKeepsLogNumbersAndAtN() throws {
        let daemon = try DaemonProcess(socket: directory.socket)
        try succeed(["start", "proj", "--at", "2d"])
        try succeed(["start", "mail", "--at", "3h"])
        try succeed(["stop", "mail", "--at", "2h"])
        // proj's line is written after mail's, but ended 23 hours before it.
        try succeed(["stop", "proj", "--at", "25h"])
        #expect(try log().map(\.name) == ["proj", "mail"])
        #expect(try log(["--since", "1d"]).map(\.name) == ["mail"])
        // The table's @1 is mail's row, and so is `amend @1`'s interval.
        for (window, second) in [([], "proj"), (["--since", "1d"], nil), (["--since", "3d"], "proj")] {
            let table = try succeed(["log"] + window).output.split(separator: "\n")
            #expect(table.first { $0.contains("@1") }?.contains("mail") == true, "swctl log \(window): \(table)")
            let row2 = table.first { $0.contains("@2") }
            #expect(second.map { row2?.contains($0) == true } ?? (row2 == nil), "swctl log \(window): \(table)")
        }
        let amended = try interval(try succeed(["--json", "amend", "@1", "--note", "inbox"]))
        #expect(amended.name == "mail" && amended.note == "inbox", "\(amended)")
        let older = try interval(try succeed(["--json", "amend", "@2", "--note", "the report"]))
        #expect(older.name == "proj" && older.note == "the report", "\(older)")
        #expect(try log().map(\.note) == ["the report", "inbox"])
        _ = daemon
    }

    @Test("track, amend, delete and undo show in report at each step, and all of it survives kill -9")
    func correctionsSurviveACrash() throws {
        var daemon = try DaemonProcess(socket: directory.socket)
        let day = Self.yesterday
        let hour: Int64 = 3_600_000
        let tracked = try interval(try succeed(["--json", "track", "work", "\(day)T09:00", "\(day)T10:00", "--note", "planning"]))
        #expect(tracked.elapsedMs == hour && tracked.note == "planning" && tracked.name == "work", "\(tracked)")
        #expect(try reportTotal(since: day) == hour)

        let amended = try interval(try succeed(["--json", "amend", "@1", "--end", "\(day)T10:30"]))
        #expect(amended.id == tracked.id && amended.elapsedMs == hour * 3 / 2 && amended.note == "planning", "\(amended)")
        #expect(try reportTotal(since: day) == hour * 3 / 2)

        let second = try interval(try succeed(["--json", "track", "work", "\(day)T11:00", "\(day)T11:15"]))
        #expect(try reportTotal(since: day) == hour * 7 / 4)
        // @1 is the latest ended interval: the one just tracked.
        let deleted = try interval(try succeed(["--json", "delete", "@1"]))
        #expect(deleted.id == second.id)
        #expect(try reportTotal(since: day) == hour * 3 / 2)

        try succeed(["undo"])  // the delete
        #expect(try reportTotal(since: day) == hour * 7 / 4)
        try succeed(["undo"])  // the second track
        #expect(try reportTotal(since: day) == hour * 3 / 2)

        // Every answered correction is on disk: a crash and a restart show the same.
        _ = daemon.stop(SIGKILL)
        _ = daemon.waitForExit()
        daemon = try DaemonProcess(socket: directory.socket)
        #expect(try reportTotal(since: day) == hour * 3 / 2)
        let kept = try log(["--since", day])
        #expect(kept.count == 1 && kept.first?.id == tracked.id && kept.first?.endMs == amended.endMs && kept.first?.note == "planning", "\(kept)")
        // The undo history outlives the restart too: the amend is next.
        // `--json`: the Interval alone, as track, amend and delete print it.
        let undone = try succeed(["--json", "undo"])
        #expect(try interval(undone).id == tracked.id, "\(undone.output)")
        #expect(try reportTotal(since: day) == hour)
        _ = daemon
    }

    @Test("bad input is refused in one line with its range, and writes nothing")
    func refusalsWriteNothing() throws {
        let daemon = try DaemonProcess(socket: directory.socket)
        let day = Self.yesterday
        try succeed(["track", "work", "\(day)T09:00", "\(day)T10:00"])
        try succeed(["start", "work"])
        let longNote = String(repeating: "n", count: 1_025)
        let refusals: [[String]] = [
            ["stop", "work", "--at", "\(day)T08:00"],  // before the start
            ["track", "work", "\(day)T09:30", "\(day)T10:30"],  // overlaps
            ["track", "work", "\(day)T10:00", "\(day)T10:00"],  // end at the start
            ["track", "work", "\(day)T11:00", "2099-01-01T00:00"],  // end in the future
            ["track", "work", "\(day)T11:00", "\(day)T12:00", "--note", longNote],
            ["track", "work", "\(day)T11:00", "\(day)T12:00", "--note", "two\nlines"],
            ["amend", "@0", "--note", "x"],
            ["amend", "@-1", "--note", "x"],
            ["amend", "@99999999999999999999", "--note", "x"],
            ["amend", "ffffffffffffffff", "--note", "x"],
            ["delete", "abc"],  // shorter than 6 digits
        ]
        let before = try log(["--since", day]).filter { $0.endMs != nil }
        for arguments in refusals {
            let result = try swctl(arguments)
            #expect(result.status == 1 || result.status == 2, "\(arguments): \(result.status) \(result.output)")
            let lines = result.error.split(separator: "\n")
            #expect(lines.count == 1, "\(arguments): \(result.error)")
            #expect(result.output.isEmpty, "\(arguments): \(result.output)")
        }
        #expect(try log(["--since", day]).filter { $0.endMs != nil } == before)
        _ = daemon
    }
}
