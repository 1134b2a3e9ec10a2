import Foundation
import Glibc
import LinuxSystem
import StopwatchProtocol
@testable import StopwatchDaemon
import TestSupport
import Testing
import Varlink

/// Which interval lines the correction index holds as late (written out of end order, merged
/// back in by `History`): a line is late only among the lines of its own month's file, so
/// that a line far ahead (a clock once set to a later month, a hand-written year 9999) or a
/// damaged one does not make every later append late. Manual clocks, a temporary directory;
/// nothing sleeps.
@Suite("history late lines")
final class HistoryLateLineTests {
    let folder: TemporaryFolder
    var root: String { folder.path }
    let logged = Locked<[String]>([])
    /// 2023-11-14 22:13:20 UTC.
    static let now: Int64 = 1_700_000_000_000
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 24 * hour
    /// 2023-10-01 and 2023-11-01, 00:00 UTC.
    static let october: Int64 = 1_696_118_400_000
    static let november: Int64 = 1_698_796_800_000
    /// An hour before the end of 9999-12-31 (UTC): the last month there is.
    static let future = Interval.latestMs - hour

    init() throws {
        folder = try TemporaryFolder(prefix: "swlate")
    }

    func fixture(keepDays: Int? = nil) -> StopwatchServiceFixture {
        StopwatchServiceFixture(
            now: .seconds(100), historyDirectory: root, wallClock: ManualWallClock(Self.now), historyKeepDays: keepDays, logged: logged
        )
    }

    /// A line as the daemon writes it, an hour long, ending at `end`; `id` is its last hex digits.
    static func line(_ id: String, _ name: String, end: Int64) -> String {
        let id = String(repeating: "0", count: 16 - id.count) + id
        return #"{"id":"\#(id)","name":"\#(name)","start_ms":\#(end - hour),"end_ms":\#(end),"elapsed_ms":\#(hour)}"#
    }

    /// Writes the month file `name` (`YYYY-MM`) with `lines`.
    func write(_ name: String, _ lines: [String]) throws {
        try (lines.joined(separator: "\n") + "\n").write(toFile: root + "/" + name + ".jsonl", atomically: false, encoding: .utf8)
    }

    /// Appends an interval of `name` ending at `end` (a second long), as a stop does.
    @discardableResult
    func append(_ f: StopwatchServiceFixture, _ name: String, end: Int64) -> Interval {
        f.queue.sync { f.history!.append(Interval(name: name, startMs: end - 1000, endMs: end, elapsedMs: 1000)) }
    }

    /// How many lines the journal's index holds as late (nil: not built).
    func lateLineCount(_ f: StopwatchServiceFixture) -> Int? {
        f.queue.sync { f.history!.corrections?.lateLineCount }
    }

    func isInEndOrder(_ intervals: [Interval]) -> Bool {
        let ends = intervals.map { $0.endMs ?? 0 }
        return ends == ends.sorted()
    }

    @Test("after a line in a later month's file (year 9999), ordinary appends in the current month are not late, before and after a restart; one dated back still is")
    func appendsAfterALineOfALaterMonthAreNotLate() throws {
        try write("2023-11", [Self.line("b1", "before", end: Self.now - 2 * Self.hour)])
        try write("9999-12", [Self.line("f1", "future", end: Self.future)])
        let f = fixture()
        // The index is built before the appends, and kept current by them.
        #expect(f.historyIntervals().map(\.name) == ["before", "future"])
        #expect(lateLineCount(f) == 0)
        for second in 0..<100 { append(f, "work", end: Self.now + Int64(second) * 1000) }
        #expect(lateLineCount(f) == 0)
        let all = f.historyIntervals()
        #expect(all.map(\.name) == ["before"] + Array(repeating: "work", count: 100) + ["future"])
        #expect(isInEndOrder(all))

        // A restart: the index is built anew, the future month read last.
        let again = fixture()
        #expect(again.historyIntervals().count == 102)
        #expect(lateLineCount(again) == 0)
        for second in 100..<200 { append(again, "work", end: Self.now + Int64(second) * 1000) }
        #expect(lateLineCount(again) == 0)
        #expect(isInEndOrder(again.historyIntervals()))

        // A stop dated back within the month is late still, and read in end order.
        append(again, "back", end: Self.now + 50_500)
        #expect(lateLineCount(again) == 1)
        let afterBack = again.historyIntervals()
        #expect(afterBack.count == 203)
        #expect(isInEndOrder(afterBack))
        #expect(afterBack.firstIndex { $0.name == "back" } == 52)
        #expect(afterBack.last?.name == "future")
    }

    @Test(
        "a damaged line with the daemon's tail shape and a broken head teaches no end: the lines after it are not late, whatever end it claims",
        arguments: [Interval.latestMs, november + 29 * day + 23 * hour]
    )
    func damagedLineTeachesNoEnd(claimedEnd: Int64) throws {
        // Its id is no id: History skips the line.
        let damaged = #"{"id":"NOT-AN-ID-AT-ALL","name":"broken","start_ms":0,"end_ms":\#(claimedEnd),"elapsed_ms":0}"#
        try write("2023-11", [
            Self.line("b1", "one", end: Self.november + Self.day),
            damaged,
            Self.line("b2", "two", end: Self.november + 2 * Self.day),
            Self.line("b3", "three", end: Self.november + 3 * Self.day),
            Self.line("b4", "four", end: Self.november + 4 * Self.day),
        ])
        let f = fixture()
        #expect(f.historyIntervals().map(\.name) == ["one", "two", "three", "four"])
        #expect(lateLineCount(f) == 0)
        append(f, "work", end: Self.now)
        #expect(lateLineCount(f) == 0)
        #expect(f.historyIntervals().map(\.name) == ["one", "two", "three", "four", "work"])
    }

    @Test("History answers in end order with a line in a future month's file, lines whose end lies outside their file's month, a stop dated back within a month, and appends to an earlier month")
    func endOrderAcrossMonthFiles() throws {
        try write("2023-10", [
            Self.line("a1", "oct20", end: Self.october + 19 * Self.day),
            Self.line("a2", "nov02-in-october", end: Self.november + Self.day),  // after its file's month: late
            Self.line("a3", "oct25", end: Self.october + 24 * Self.day),
        ])
        try write("2023-11", [
            Self.line("b1", "nov01", end: Self.november + 12 * Self.hour),
            Self.line("b2", "oct15-in-november", end: Self.october + 14 * Self.day),  // before its file's month: late
            Self.line("b3", "nov05", end: Self.november + 4 * Self.day),
            Self.line("b4", "nov04", end: Self.november + 3 * Self.day),  // a stop dated back: late
            Self.line("b5", "nov06", end: Self.november + 5 * Self.day),
        ])
        try write("9999-12", [Self.line("f1", "future", end: Self.future)])
        let inEndOrder = ["oct15-in-november", "oct20", "oct25", "nov01", "nov02-in-october", "nov04", "nov05", "nov06", "future"]
        let f = fixture()
        #expect(f.historyIntervals().map(\.name) == inEndOrder)
        #expect(lateLineCount(f) == 3)
        #expect(f.historyIntervals(["since_ms": .int(Self.november + 18 * Self.hour)]).map(\.name) == Array(inEndOrder[4...]))
        #expect(f.historyIntervals(["name": .string("nov02-in-october")]).count == 1)

        // Appended now (in November), and to October (a stop dated back across the month's
        // start): each compared with its own month's lines only.
        append(f, "nov14", end: Self.now)
        append(f, "oct30", end: Self.october + 29 * Self.day)
        #expect(lateLineCount(f) == 3)
        append(f, "oct22", end: Self.october + 21 * Self.day)  // before oct30, in its file: late
        #expect(lateLineCount(f) == 4)
        let expected = ["oct15-in-november", "oct20", "oct22", "oct25", "oct30", "nov01", "nov02-in-october", "nov04", "nov05", "nov06", "nov14", "future"]
        #expect(f.historyIntervals().map(\.name) == expected)
        // Read anew from the files.
        let again = fixture()
        #expect(again.historyIntervals().map(\.name) == expected)
        #expect(lateLineCount(again) == 4)
    }

    @Test("the end learnt without a parse is read only from lines History accepts, of the daemon's shape with an id or without")
    func plainEndOnlyFromAcceptedLines() {
        let lines: [(line: String, plainEnd: Int64?)] = [
            (#"{"id":"0123456789abcdef","name":"deep work","start_ms":1,"end_ms":2,"elapsed_ms":1}"#, 2),
            (#"{"name":"deep work","start_ms":1,"end_ms":2,"elapsed_ms":1}"#, 2),  // the release before ids
            (#"{"id":"0123456789abcdef","name":"t","start_ms":1,"end_ms":\#(Interval.latestMs),"elapsed_ms":1}"#, Interval.latestMs),
            // Damaged: a broken head before the daemon's tail.
            (#"{"id":"NOT-AN-ID-AT-ALL","name":"t","start_ms":1,"end_ms":2,"elapsed_ms":1}"#, nil),
            (#"{"id":"0123456789ABCDEF","name":"t","start_ms":1,"end_ms":2,"elapsed_ms":1}"#, nil),
            (#"{"id":"0123456789abcdef","name":"bad/name","start_ms":1,"end_ms":2,"elapsed_ms":1}"#, nil),
            (#"{"name":"bad/name","start_ms":1,"end_ms":2,"elapsed_ms":1}"#, nil),
            (#"{"name":"","start_ms":1,"end_ms":2,"elapsed_ms":1}"#, nil),
            (#"{"name":" padded","start_ms":1,"end_ms":2,"elapsed_ms":1}"#, nil),
            (#"xx{"name":"t","start_ms":1,"end_ms":2,"elapsed_ms":1}"#, nil),
            (#"{"id":"0123456789abcdef","name":"t","start_ms":3,"end_ms":2,"elapsed_ms":1}"#, nil),
            (#"{"name":"t","start_ms":1,"end_ms":02,"elapsed_ms":1}"#, nil),
            (#"{"name":"t","start_ms":1,"end_ms":\#(Interval.latestMs + 1),"elapsed_ms":1}"#, nil),
            // Whole but of another shape: parsed instead.
            (#"{"id":"0123456789abcdef","name":"t","start_ms":1,"end_ms":2,"elapsed_ms":1,"note":"n"}"#, nil),
            (#"{"name":"café","start_ms":1,"end_ms":2,"elapsed_ms":1}"#, nil),
            (#"{"name": "t","start_ms":1,"end_ms":2,"elapsed_ms":1}"#, nil),
        ]
        for (line, expected) in lines {
            let (plainEnd, parsed) = Array(line.utf8).withUnsafeBytes { (HistoryLine.plainEnd($0), HistoryLine.parse($0)) }
            #expect(plainEnd == expected, "\(line)")
            // Never an end from a line History would not read as that interval.
            if let plainEnd { #expect(parsed?.endMs == plainEnd, "\(line)") }
        }
    }

    @Test("the whole-line check without a parse takes a name byte or an id digit exactly as the rule does, for every byte value")
    func plainCheckTakesEveryByteAsTheRuleDoes() {
        func line(id: [UInt8]?, name: [UInt8]) -> [UInt8] {
            var bytes = Array("{".utf8)
            if let id { bytes += Array(#""id":""#.utf8) + id + Array(#"","#.utf8) }
            return bytes + Array(#""name":""#.utf8) + name + Array(#"","start_ms":1,"end_ms":2,"elapsed_ms":1}"#.utf8)
        }
        let id = Array("0123456789abcdef".utf8)
        var checked = 0
        for length in [1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65] {
            for place in Set([0, length / 2, length - 1]) {
                for byte in UInt8.min...UInt8.max {
                    var name = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    name[place] = byte
                    let printable = name.allSatisfy { (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
                    let valid = printable && StopwatchName.isValid(String(decoding: name, as: UTF8.self))
                    for withID in [true, false] {
                        let bytes = line(id: withID ? id : nil, name: name)
                        let (plainEnd, plain) = bytes.withUnsafeBytes { (HistoryLine.plainEnd($0), HistoryLine.plain($0)) }
                        #expect((plainEnd != nil) == valid, "\(length) \(place) \(byte) \(withID)")
                        if withID { #expect((plain != nil) == valid, "\(length) \(place) \(byte)") }
                        if valid { #expect(bytes.withUnsafeBytes { HistoryLine.parse($0)?.endMs } == 2) }
                        checked += 1
                    }
                }
            }
        }
        for place in 0..<16 {
            for byte in UInt8.min...UInt8.max {
                var digits = id
                digits[place] = byte
                let isDigit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                let bytes = line(id: digits, name: Array("t".utf8))
                let (plainEnd, plain) = bytes.withUnsafeBytes { (HistoryLine.plainEnd($0), HistoryLine.plain($0)) }
                #expect((plainEnd != nil) == isDigit, "\(place) \(byte)")
                #expect((plain != nil) == isDigit, "\(place) \(byte)")
                checked += 1
            }
        }
        #expect(checked > 15_000)
    }

    @Test(
        "an interval that cannot be written yet is read after every month's file: merged in by its end, before a line of a later month, whether the index was built before it or after",
        arguments: [true, false]
    )
    func unwrittenIntervalReadInEndOrder(indexBuiltFirst: Bool) throws {
        try write("9999-12", [Self.line("f1", "future", end: Self.future)])
        // A directory where November's file should be: the append fails, the interval waits.
        try FileManager.default.createDirectory(atPath: root + "/2023-11.jsonl", withIntermediateDirectories: false)
        let f = fixture()
        if indexBuiltFirst { #expect(f.historyIntervals().map(\.name) == ["future"]) }
        append(f, "waiting", end: Self.now)
        #expect(f.queue.sync { f.history!.unwritten.count } == 1)
        #expect(f.historyIntervals().map(\.name) == ["waiting", "future"])
        // Written once writing works: read from its month's file, in the same order.
        try FileManager.default.removeItem(atPath: root + "/2023-11.jsonl")
        f.queue.sync { f.history!.retry() }
        #expect(f.queue.sync { f.history!.unwritten.count } == 0)
        #expect(f.historyIntervals().map(\.name) == ["waiting", "future"])
        append(f, "after", end: Self.now + 1000)
        #expect(f.historyIntervals().map(\.name) == ["waiting", "after", "future"])
        #expect(fixture().historyIntervals().map(\.name) == ["waiting", "after", "future"])
    }

    @Test("pruning a month forgets its late lines: the months left are read in end order, and appends after are not late")
    func pruneForgetsLateLines() throws {
        let september: Int64 = 1_693_526_400_000  // 2023-09-01 UTC
        try write("2023-09", [
            Self.line("c1", "sep10", end: september + 9 * Self.day),
            Self.line("c2", "sep05", end: september + 4 * Self.day),  // late
        ])
        try write("2023-11", [Self.line("b1", "nov01", end: Self.november + Self.day)])
        let f = fixture(keepDays: 30)
        #expect(f.historyIntervals().map(\.name) == ["sep05", "sep10", "nov01"])
        #expect(lateLineCount(f) == 1)
        f.queue.sync { f.history!.prune() }
        #expect(!FileManager.default.fileExists(atPath: root + "/2023-09.jsonl"))
        #expect(f.historyIntervals().map(\.name) == ["nov01"])
        #expect(lateLineCount(f) == 0)
        append(f, "work", end: Self.now)
        #expect(lateLineCount(f) == 0)
        #expect(f.historyIntervals().map(\.name) == ["nov01", "work"])
    }
}
