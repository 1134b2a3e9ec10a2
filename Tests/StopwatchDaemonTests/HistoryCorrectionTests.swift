import Foundation
import Glibc
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
@testable import StopwatchDaemon
import TestSupport
import Testing
import Varlink

/// Corrections of the history (Track, Amend, Delete, Undo), the rules that say which record
/// counts, ids, and damaged correction lines. Manual clocks, a temporary directory; nothing
/// sleeps.
@Suite("history corrections")
final class HistoryCorrectionTests {
    let root: String
    let logged = Locked<[String]>([])
    /// 2023-11-14 22:13:20 UTC.
    static let now: Int64 = 1_700_000_000_000
    static let hour: Int64 = 3_600_000

    init() throws {
        var template = Array("/tmp/swcorr-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    func fixture() -> StopwatchServiceFixture {
        StopwatchServiceFixture(now: .seconds(100), historyDirectory: root, wallClock: ManualWallClock(Self.now), logged: logged)
    }

    func interval(_ reply: JSONObject?) -> Interval? {
        guard let json = reply?["interval"] else { return nil }
        return try? Interval(json: json)
    }

    func track(_ f: StopwatchServiceFixture, _ name: String, _ start: Int64, _ end: Int64, note: String? = nil) -> Result<VarlinkAnswer, VarlinkError> {
        var parameters: JSONObject = ["name": .string(name), "start_ms": .int(start), "end_ms": .int(end)]
        if let note { parameters["note"] = .string(note) }
        return f.call("Track", parameters)
    }

    func tracked(_ f: StopwatchServiceFixture, _ name: String, _ start: Int64, _ end: Int64, note: String? = nil) throws -> Interval {
        guard case .success(.reply(let reply)) = track(f, name, start, end, note: note), let made = interval(reply) else {
            throw Errno(EINVAL)
        }
        return made
    }

    func reason(_ result: Result<VarlinkAnswer, VarlinkError>) -> String? {
        guard case .failure(let error) = result else { return nil }
        if case .string(let reason)? = error.parameters["reason"] { return "\(error.name): \(reason)" }
        return error.name
    }

    func lines() throws -> [String] {
        // The months: not `open.json`, the counting intervals for the other devices.
        let names = try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.hasSuffix(".jsonl") }.sorted()
        return try names.flatMap { try String(contentsOfFile: root + "/" + $0, encoding: .utf8).split(separator: "\n").map(String.init) }
    }

    @Test("Track adds an interval with a new id; Amend changes it keeping the id; Delete removes it; each reflected in History, and again after a restart")
    func trackAmendDelete() throws {
        let f = fixture()
        let made = try tracked(f, "work", Self.now - 3 * Self.hour, Self.now - 2 * Self.hour, note: "review")
        #expect(IntervalID.isValid(made.id) && made.elapsedMs == Self.hour && made.note == "review")
        #expect(f.historyIntervals() == [made])
        let amended = interval(f.reply("Amend", ["id": .string(String(made.id.prefix(6))), "end_ms": .int(Self.now - Self.hour)]))
        #expect(amended?.id == made.id && amended?.elapsedMs == 2 * Self.hour && amended?.note == "review")
        #expect(f.historyIntervals() == [amended].compactMap { $0 })
        #expect(interval(f.reply("Delete", ["id": .string(made.id)])) == amended)
        #expect(f.historyIntervals().isEmpty)
        // A daemon started anew reads the same from the files.
        let again = fixture()
        #expect(again.historyIntervals().isEmpty)
        #expect(interval(again.reply("Undo"))?.id == made.id)
        #expect(again.historyIntervals() == [amended].compactMap { $0 })
        #expect(fixture().historyIntervals() == [amended].compactMap { $0 })
        #expect(try lines().count == 4)
    }

    @Test("an amended interval of the journal takes its place in end order among the others; the original line is not rewritten")
    func amendedInEndOrder() throws {
        let f = fixture()
        let a = try tracked(f, "a", Self.now - 5 * Self.hour, Self.now - 4 * Self.hour)
        // An interval line of the journal, as a stop writes one.
        _ = f.reply("Start", ["name": .string("b")])
        f.time.advance(by: .seconds(60))
        f.wallClock.advance(by: 60_000)
        _ = f.reply("Stop", ["name": .string("b")])
        let b = try #require(f.historyIntervals().first { $0.name == "b" })
        #expect(f.historyIntervals().map(\.name) == ["a", "b"])
        // b moved before a: it reads first.
        _ = f.reply("Amend", ["id": .string(b.id), "start_ms": .int(Self.now - 7 * Self.hour), "end_ms": .int(Self.now - 6 * Self.hour)])
        #expect(f.historyIntervals().map(\.name) == ["b", "a"])
        #expect(f.historyIntervals().first?.elapsedMs == Self.hour)
        _ = a
        #expect(try lines().filter { $0.hasPrefix(#"{"id":""#) }.count == 1)
    }

    @Test("Undo takes back the latest correction not yet undone, then the one before: three undos in a row, then NothingToUndo")
    func threeUndos() throws {
        let f = fixture()
        let made = try tracked(f, "work", Self.now - 3 * Self.hour, Self.now - 2 * Self.hour)
        _ = f.reply("Amend", ["id": .string(made.id), "note": .string("first")])
        _ = f.reply("Amend", ["id": .string(made.id), "note": .string("second")])
        #expect(f.historyIntervals().first?.note == "second")
        let first = f.reply("Undo")
        #expect(first?["undone"] == .string("amend") && interval(first)?.note == "first")
        #expect(f.historyIntervals().first?.note == "first")
        let second = f.reply("Undo")
        #expect(second?["undone"] == .string("amend") && interval(second)?.note == nil)
        #expect(f.historyIntervals().map(\.note) == [nil])
        let third = f.reply("Undo")
        #expect(third?["undone"] == .string("track") && interval(third)?.id == made.id)
        #expect(f.historyIntervals().isEmpty)
        #expect(f.error("Undo") == "io.stopwatchd.NothingToUndo")
        // Recorded: a restart knows what was undone.
        #expect(fixture().error("Undo") == "io.stopwatchd.NothingToUndo")
    }

    @Test("the undo of a delete brings the interval back; an amend of a deleted interval is refused")
    func undoOfDelete() throws {
        let f = fixture()
        let made = try tracked(f, "work", Self.now - 3 * Self.hour, Self.now - 2 * Self.hour)
        _ = f.reply("Delete", ["id": .string(made.id)])
        #expect(reason(f.call("Amend", ["id": .string(made.id), "note": .string("x")]))?.contains("was deleted") == true)
        #expect(reason(f.call("Delete", ["id": .string(made.id)]))?.contains("was deleted") == true)
        let undone = f.reply("Undo")
        #expect(undone?["undone"] == .string("delete") && interval(undone) == made)
        #expect(f.historyIntervals() == [made])
    }

    @Test("the record that counts: the latest by made_ms; a tie goes to the greater device id, then to the later place; an undo takes back the one it names")
    func latestWinsTiesToGreaterDevice() {
        func form(_ rec: String, _ made: Int64, note: String) -> HistoryCorrection {
            HistoryCorrection(record: rec, madeMs: made, change: .form(.amend, id: "00000000000000aa", interval: Interval(
                id: "00000000000000aa", name: "w", startMs: 0, endMs: 10, elapsedMs: 10, note: note
            )))
        }
        let low = String(repeating: "1", count: 32), high = String(repeating: "f", count: 32)
        var index = CorrectionIndex()
        index.add(form("0000000000000001", 500, note: "later"), device: low, place: 1, isOwn: true)
        index.add(form("0000000000000002", 400, note: "earlier"), device: high, place: 1, isOwn: false)
        #expect(index.counting("00000000000000aa")?.interval?.note == "later")
        // The same instant: the greater device id wins, whichever was read first.
        index.add(form("0000000000000003", 500, note: "tie, greater device"), device: high, place: 2, isOwn: false)
        #expect(index.counting("00000000000000aa")?.interval?.note == "tie, greater device")
        var reversed = CorrectionIndex()
        reversed.add(form("0000000000000003", 500, note: "tie, greater device"), device: high, place: 2, isOwn: false)
        reversed.add(form("0000000000000001", 500, note: "later"), device: low, place: 1, isOwn: true)
        #expect(reversed.counting("00000000000000aa")?.interval?.note == "tie, greater device")
        // Undone: the next in order counts.
        index.add(HistoryCorrection(record: "0000000000000009", madeMs: 600, change: .undo(record: "0000000000000003")), device: low, place: 2, isOwn: true)
        #expect(index.counting("00000000000000aa")?.interval?.note == "later")
        // This device's latest not undone is what Undo takes back.
        #expect(index.latestUndoable()?.record == "0000000000000001")
    }

    @Test("the derived id of a line without one is its content's FNV-1a 64, the same on every read and across restarts")
    func derivedIDsStable() throws {
        let line = #"{"name":"tea","start_ms":1699990000000,"end_ms":1699993600000,"elapsed_ms":3600000}"#
        try (line + "\n").write(toFile: root + "/2023-11.jsonl", atomically: false, encoding: .utf8)
        let id = IntervalIdentity.derived(name: "tea", startMs: 1_699_990_000_000, endMs: 1_699_993_600_000, elapsedMs: 3_600_000)
        // FNV-1a 64 of "tea\01699990000000\01699993600000\03600000", computed independently.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array("tea\u{0}1699990000000\u{0}1699993600000\u{0}3600000".utf8) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        #expect(id == String(repeating: "0", count: 16 - String(hash, radix: 16).count) + String(hash, radix: 16))
        #expect(fixture().historyIntervals().map(\.id) == [id])
        #expect(fixture().historyIntervals().map(\.id) == [id])
        // Amended by that id, the line itself is not rewritten.
        let f = fixture()
        #expect(interval(f.reply("Amend", ["id": .string(id), "note": .string("green")]))?.note == "green")
        #expect(try lines().first == line)
        #expect(fixture().historyIntervals().map(\.note) == ["green"])
    }

    @Test("a damaged correction line (torn, not JSON, naming no id) is skipped and counted in the status; the interval it named reads as before it")
    func damagedCorrections() throws {
        let f = fixture()
        let made = try tracked(f, "work", Self.now - 3 * Self.hour, Self.now - 2 * Self.hour)
        let month = root + "/2023-11.jsonl"
        let handle = try #require(FileHandle(forWritingAtPath: month))
        handle.seekToEndOfFile()
        handle.write(Data((#"{"op":"amend","rec":"00000000000000ff","made_ms":1700000000001,"name":"work""# + "\n").utf8))
        handle.write(Data((#"{"op":"delete","rec":"00000000000000fe","made_ms":1700000000001}"# + "\n").utf8))
        handle.write(Data((#"{"op": garbage"# + "\n").utf8))
        // One naming the tracked interval, damaged by its content: an end before its start.
        handle.write(Data((#"{"op":"amend","rec":"00000000000000fc","made_ms":1700000000002,"id":"\#(made.id)","name":"work","start_ms":1699990000000,"end_ms":1699980000000,"elapsed_ms":0}"# + "\n").utf8))
        handle.closeFile()
        let g = fixture()
        #expect(g.historyIntervals() == [made])
        #expect(g.queue.sync { g.history!.problem }?.contains("4 damaged correction lines skipped") == true)
        #expect(logged.withLock { $0 }.contains { $0.contains("4 damaged correction lines") })
    }

    @Test("bad input is refused with a reason that says the allowed range, and nothing is written")
    func badInput() throws {
        let f = fixture()
        let made = try tracked(f, "work", Self.now - 3 * Self.hour, Self.now - 2 * Self.hour)
        let written = try lines()
        let cases: [(String, JSONObject, String)] = [
            ("Track", ["name": .string("work"), "start_ms": .int(Self.now - Self.hour), "end_ms": .int(Self.now - Self.hour)], "must be after the start"),
            ("Track", ["name": .string("work"), "start_ms": .int(Self.now - Self.hour), "end_ms": .int(Self.now - 2 * Self.hour)], "must be after the start"),
            ("Track", ["name": .string("work"), "start_ms": .int(Self.now - Self.hour), "end_ms": .int(Self.now + 1000)], "in the future"),
            ("Track", ["name": .string("work"), "start_ms": .int(Self.now - 366 * 24 * Self.hour - 1), "end_ms": .int(Self.now)], "longer than 366 days"),
            ("Track", ["name": .string("work"), "start_ms": .int(Self.now - 150 * 60_000), "end_ms": .int(Self.now - 90 * 60_000)], "overlap \(made.id)"),
            ("Amend", ["id": .string("abcdef"), "note": .string("x")], "NoSuchInterval"),
            ("Amend", ["id": .string("abcde"), "note": .string("x")], "InvalidParameter"),
            ("Amend", ["id": .string("ABCDEF"), "note": .string("x")], "InvalidParameter"),
            ("Amend", ["id": .string(made.id), "note": .string(String(repeating: "n", count: 1025))], "InvalidParameter"),
            ("Amend", ["id": .string(made.id), "note": .string("two\nlines")], "InvalidParameter"),
            ("Track", ["name": .string("work"), "start_ms": .int(1), "end_ms": .int(2), "note": .string("")], "InvalidParameter"),
            ("Delete", ["id": .string("00000000000000000")], "InvalidParameter"),
            ("Amend", ["id": .string(made.id), "name": .int(3)], "InvalidParameter"),
            ("Amend", ["id": .string(made.id), "name": .string("a/b")], "InvalidName"),
            ("Track", ["name": .string("work"), "start_ms": .string("1"), "end_ms": .int(2)], "InvalidParameter"),
        ]
        for (method, parameters, expected) in cases {
            let refusal = reason(f.call(method, parameters))
            #expect(refusal?.contains(expected) == true, "\(method) \(parameters): \(refusal ?? "accepted")")
        }
        // Counting since 10 minutes ago: an interval of it must end by then.
        _ = f.reply("Start", ["name": .string("work")])
        f.time.advance(by: .seconds(600))
        f.wallClock.advance(by: 600_000)
        let overlapsCounting = reason(track(f, "work", Self.now - 30 * 60_000, Self.now + 300_000))
        #expect(overlapsCounting?.contains("counts from") == true, "\(overlapsCounting ?? "accepted")")
        // Another name may overlap.
        #expect(reason(track(f, "other", Self.now - 150 * 60_000, Self.now - 90 * 60_000)) == nil)
        #expect(try lines().count == written.count + 1)
    }

    @Test("a prefix that matches several ids is refused naming them")
    func ambiguousPrefix() throws {
        let f = fixture()
        // Ids are random: tracked until two share their first six digits is too long a wait,
        // so two lines with chosen ids are written as the journal writes them.
        let one = Interval(id: "abcdef0000000001", name: "a", startMs: Self.now - 9 * Self.hour, endMs: Self.now - 8 * Self.hour, elapsedMs: Self.hour)
        let two = Interval(id: "abcdef0000000002", name: "a", startMs: Self.now - 7 * Self.hour, endMs: Self.now - 6 * Self.hour, elapsedMs: Self.hour)
        var bytes: [UInt8] = []
        HistoryLine.encode(one, into: &bytes)
        HistoryLine.encode(two, into: &bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: root + "/2023-11.jsonl"))
        let refusal = reason(f.call("Delete", ["id": .string("abcdef")]))
        #expect(refusal?.contains("abcdef0000000001, abcdef0000000002") == true, "\(refusal ?? "accepted")")
        #expect(interval(f.reply("Delete", ["id": .string("abcdef0000000002")]))?.id == two.id)
        #expect(f.historyIntervals().map(\.id) == [one.id])
    }

    @Test("at start, a torn correction line is cut off; a whole one that lost only its newline is kept and counts")
    func tornCorrectionLine() throws {
        let f = fixture()
        let made = try tracked(f, "work", Self.now - 3 * Self.hour, Self.now - 2 * Self.hour)
        let month = root + "/2023-11.jsonl"
        let whole = try String(contentsOfFile: month, encoding: .utf8)
        let delete = #"{"op":"delete","rec":"00000000000000fd","made_ms":1700000000001,"id":"\#(made.id)"}"#
        try (whole + delete).write(toFile: month, atomically: false, encoding: .utf8)
        let kept = fixture()
        kept.queue.sync { kept.history!.start() }
        #expect(try String(contentsOfFile: month, encoding: .utf8) == whole + delete + "\n")
        #expect(kept.historyIntervals().isEmpty)
        try (whole + delete.dropLast(9)).write(toFile: month, atomically: false, encoding: .utf8)
        let cut = fixture()
        cut.queue.sync { cut.history!.start() }
        #expect(try String(contentsOfFile: month, encoding: .utf8) == whole)
        #expect(cut.historyIntervals() == [made])
        #expect(cut.queue.sync { cut.history!.problem } == nil)
    }

    /// A plain line as the daemon writes it, ending `day` days and `hour` hours into October 2023 (UTC).
    static func line(_ id: String?, _ name: String, endDay day: Int64, hour: Int64 = 0, note: String? = nil) -> (line: String, end: Int64) {
        let end = 1_696_118_400_000 + (day - 1) * 24 * Self.hour + hour * Self.hour
        let start = end - Self.hour
        var text = id.map { #"{"id":"\#($0)","# } ?? "{"
        text += #""name":"\#(name)","start_ms":\#(start),"end_ms":\#(end),"elapsed_ms":\#(Self.hour)"#
        if let note { text += #","note":"\#(note)""# }
        return (text + "}", end)
    }

    @Test("lines written out of end order (a stop at an earlier instant, a clock set back) stream in end order, across months and with a since that falls between them")
    func lateLinesInEndOrder() throws {
        let october = [
            Self.line("00000000000000a1", "a", endDay: 20),
            Self.line("00000000000000a2", "b", endDay: 25),
            Self.line("00000000000000a3", "c", endDay: 22),  // late
            Self.line(nil, "d", endDay: 21),  // late, an old line without id
            Self.line("00000000000000a5", "e", endDay: 28),
        ]
        let november = [
            Self.line("00000000000000b1", "f", endDay: 33),
            Self.line("00000000000000b2", "g", endDay: 32, note: "late, with a note"),  // late
            Self.line("00000000000000b3", "h", endDay: 36),
        ]
        try (october.map(\.line).joined(separator: "\n") + "\n").write(toFile: root + "/2023-10.jsonl", atomically: false, encoding: .utf8)
        try (november.map(\.line).joined(separator: "\n") + "\n").write(toFile: root + "/2023-11.jsonl", atomically: false, encoding: .utf8)
        let inEndOrder = (october + november).sorted { $0.end < $1.end }
        let names = inEndOrder.map { String($0.line.split(separator: "\"")[$0.line.hasPrefix(#"{"id""#) ? 7 : 3]) }
        #expect(names == ["a", "d", "c", "b", "e", "g", "f", "h"])
        let f = fixture()
        #expect(f.historyIntervals().map(\.name) == names)
        #expect(f.historyIntervals().map(\.endMs) == inEndOrder.map(\.end))
        // A since between the late lines' ends: d ended before it, c after.
        let since = Self.line(nil, "", endDay: 21, hour: 12).end
        #expect(f.historyIntervals(["since_ms": .int(since)]).map(\.name) == ["c", "b", "e", "g", "f", "h"])
        #expect(f.historyIntervals(["since_ms": .int(inEndOrder[5].end - 1)]).map(\.name) == ["g", "f", "h"])
        // One name: its late line alone, in place.
        #expect(f.historyIntervals(["name": .string("g")]).map(\.note) == ["late, with a note"])
        // Amend finds a late line by its id, and its amended form takes its place.
        #expect(interval(f.reply("Amend", ["id": .string("00000000000000a3"), "note": .string("found")]))?.note == "found")
        #expect(f.historyIntervals().map(\.name) == names)
        #expect(f.historyIntervals().first { $0.name == "c" }?.note == "found")
    }

    @Test("a stop at an earlier instant than an interval already written reads in end order, whether the index was built before the append or after it")
    func stopInThePastReadsInEndOrder() throws {
        let f = fixture()
        // Built before the appends: kept current by them.
        #expect(f.historyIntervals().isEmpty)
        _ = f.reply("Start", ["name": .string("proj")])
        f.time.advance(by: .seconds(60))
        f.wallClock.advance(by: 60_000)
        _ = f.reply("Start", ["name": .string("mail")])
        f.time.advance(by: .seconds(60))
        f.wallClock.advance(by: 60_000)
        _ = f.reply("Stop", ["name": .string("mail")])
        // proj stopped at an instant before mail's end: its line is written after mail's.
        _ = f.reply("Stop", ["name": .string("proj"), "at_ms": .int(Self.now + 90_000)])
        #expect(try lines().map { $0.contains(#""name":"proj""#) } == [false, true])
        #expect(f.historyIntervals().map(\.name) == ["proj", "mail"])
        #expect(f.historyIntervals().map(\.endMs) == [Self.now + 90_000, Self.now + 120_000])
        // Read anew from the files.
        #expect(fixture().historyIntervals().map(\.name) == ["proj", "mail"])
        #expect(fixture().historyIntervals(["since_ms": .int(Self.now + 100_000)]).map(\.name) == ["mail"])
    }

    @Test("late and corrected intervals merge among copied lines in end order whatever the reply size, a line held back behind one that completes a reply included", arguments: [1, 2, 3, 4, 7])
    func lateAndCorrectedAcrossReplies(batchSize: Int) throws {
        let lines = [
            Self.line("00000000000000a1", "a", endDay: 20),
            Self.line("00000000000000a2", "b", endDay: 25),
            Self.line("00000000000000a3", "c", endDay: 22),  // late
            Self.line("00000000000000a4", "d", endDay: 26),
            Self.line("00000000000000a5", "e", endDay: 28),
            Self.line("00000000000000a6", "f", endDay: 24),  // late
            Self.line("00000000000000a7", "g", endDay: 30),
        ]
        try (lines.map(\.line).joined(separator: "\n") + "\n").write(toFile: root + "/2023-10.jsonl", atomically: false, encoding: .utf8)
        let whole = fixture()
        // e amended to end where d does: merged right before d's line (ties by start).
        #expect(interval(whole.reply("Amend", ["id": .string("00000000000000a5"), "end_ms": .int(lines[3].end), "start_ms": .int(lines[3].end - 2 * Self.hour)]))?.name == "e")
        let expected = ["a", "c", "f", "b", "e", "d", "g"]
        #expect(whole.historyIntervals().map(\.name) == expected)
        let small = StopwatchServiceFixture(
            now: .seconds(100), historyDirectory: root, wallClock: ManualWallClock(Self.now), historyBatchSize: batchSize, logged: logged
        )
        let replies = small.historyReplies()
        #expect(replies.count == (expected.count + batchSize - 1) / batchSize)
        #expect(small.historyIntervals().map(\.name) == expected)
        #expect(small.historyIntervals(["since_ms": .int(lines[2].end - 1)]).map(\.name) == ["c", "f", "b", "e", "d", "g"])
    }

    @Test("a month large enough to be bisected for since, with late, corrected, noted, old and damaged lines throughout: the same intervals as reading it whole and keeping those after since")
    func bisectedMonthAnswersAsWhole() throws {
        // 4,000 lines (about 400 KB, past HistoryStream.bisectedSize), one every 10 minutes of
        // October 2023; some late (ending hours before the line before), some with a note, some
        // without an id (the last release's), some damaged.
        let october: Int64 = 1_696_118_400_000
        var text = ""
        var latest = october
        var lateEnds: [Int64] = []
        for number in 0..<4_000 {
            var end = october + Int64(number + 1) * 600_000
            if number % 7 == 6 {
                end -= 5 * Self.hour
                lateEnds.append(end)
            }
            latest = max(latest, end)
            let id = number % 71 == 70 ? nil : String(format: "%016llx", 0x1000 + number)
            let note = number % 53 == 52 ? "note \(number)" : nil
            if number % 97 == 96 {
                text += #"{"id":"damaged","name":"x","start_ms":\#(end - 1000),"end_ms":\#(end),"elapsed_ms":1000}"# + "\n"
                continue
            }
            var line = id.map { #"{"id":"\#($0)","# } ?? "{"
            line += #""name":"n\#(number % 5)","start_ms":\#(end - 300_000),"end_ms":\#(end),"elapsed_ms":300000"#
            if let note { line += #","note":"\#(note)""# }
            text += line + "}\n"
        }
        try text.write(toFile: root + "/2023-10.jsonl", atomically: false, encoding: .utf8)
        #expect(text.utf8.count > Int(HistoryStream.bisectedSize))
        let f = fixture()
        // Corrections too: an amend that moves an interval to the month's start, a delete.
        #expect(interval(f.reply("Amend", ["id": .string(String(format: "%016llx", 0x1000 + 2_000)), "start_ms": .int(october), "end_ms": .int(october + 1_000)]))?.name == "n0")
        #expect(reason(f.call("Delete", ["id": .string(String(format: "%016llx", 0x1000 + 3_000))])) == nil)
        let all = f.historyIntervals()
        #expect(all.count == 4_000 - 4_000 / 97 - 1)
        #expect(all.map { $0.endMs ?? 0 } == all.map { $0.endMs ?? 0 }.sorted())
        // Anywhere, and just after a late line's end (a probe that took a late line for one
        // in end order would begin past lines that end after it).
        let sinces = (0...20).map { october + (latest - october) * Int64($0) / 20 + Int64($0 % 3) * 7 }
            + stride(from: 0, to: lateEnds.count, by: 11).map { lateEnds[$0] + 1 }
        for since in sinces {
            let expected = all.filter { ($0.endMs ?? 0) > since }
            let bisected = f.queue.sync { f.history!.monthsBisected }
            #expect(f.historyIntervals(["since_ms": .int(since)]) == expected, "since \(since)")
            // Past its first tenth, the month was read from where the bisection found, not whole.
            if since > october + (latest - october) / 10 {
                #expect(f.queue.sync { f.history!.monthsBisected } == bisected + 1, "since \(since)")
            }
        }
    }

    @Test("an interval not written yet (writing fails) that ended before a corrected one comes before it, in end order")
    func unwrittenMergedWithCorrected() throws {
        let f = fixture()
        let made = try tracked(f, "a", Self.now - 3 * Self.hour, Self.now - 2 * Self.hour)
        #expect(interval(f.reply("Amend", ["id": .string(made.id), "start_ms": .int(Self.now - Self.hour), "end_ms": .int(Self.now)]))?.endMs == Self.now)
        #expect(reason(f.call("Start", ["name": .string("b"), "at_ms": .int(Self.now - 30 * 60_000)])) == nil)
        // The month's file replaced by a directory: the open file is found unlinked, and
        // opening it again fails, so the stop's interval waits in memory. (The amended form
        // of "a" is the index's, in memory: History still has it.)
        let month = root + "/" + HistoryMonth(epochMilliseconds: Self.now).fileName
        try FileManager.default.removeItem(atPath: month)
        try FileManager.default.createDirectory(atPath: month, withIntermediateDirectories: false)
        #expect(reason(f.call("Stop", ["name": .string("b"), "at_ms": .int(Self.now - 10 * 60_000)])) == nil)
        #expect(f.queue.sync { f.history!.unwritten.count } == 1)
        #expect(f.historyIntervals().map(\.name) == ["b", "a"])
        #expect(f.historyIntervals().map(\.endMs) == [Self.now - 10 * 60_000, Self.now])
    }
}
