import Foundation
import Glibc
import LinuxSystem
import StopwatchProtocol
@testable import StopwatchDaemon
import TestSupport
import Testing
import Varlink

/// `History` with `since` bisects a large month file (`HistoryStream.startOffset`) only while
/// the correction index has learnt every line of it: the file it read or made, up to the
/// size read (`CorrectionIndex.hasLearnt`), kept so by the daemon's own appends. A file
/// changed from outside is read whole. Manual clocks, a temporary directory; nothing sleeps.
@Suite("history bisection")
final class HistoryBisectionTests {
    let folder: TemporaryFolder
    var root: String { folder.path }
    let logged = Locked<[String]>([])
    /// 2023-11-14 22:13:20 UTC.
    static let now: Int64 = 1_700_000_000_000
    /// 2023-11-01 00:00 UTC.
    static let november: Int64 = 1_698_796_800_000
    /// The lines of the large month: about 400 KB, past `HistoryStream.bisectedSize`.
    static let count = 4_000

    init() throws {
        folder = try TemporaryFolder(prefix: "swbisect")
    }

    var month: String { root + "/2023-11.jsonl" }

    func fixture() -> StopwatchServiceFixture {
        StopwatchServiceFixture(now: .seconds(100), historyDirectory: root, wallClock: ManualWallClock(Self.now), logged: logged)
    }

    /// Where line `number` of the large month ends: every 5 minutes from November's start,
    /// the last 53 minutes before `now`.
    static func end(_ number: Int) -> Int64 { november + Int64(number + 1) * 300_000 }

    static func id(_ number: Int) -> String { String(format: "%016llx", 0x1000 + number) }

    /// Line `number` of the large month as the daemon writes it, two minutes long, ending at
    /// `end(number)` or at `end`.
    static func line(_ number: Int, end: Int64? = nil) -> String {
        let end = end ?? Self.end(number)
        return #"{"id":"\#(id(number))","name":"n\#(number % 5)","start_ms":\#(end - 120_000),"end_ms":\#(end),"elapsed_ms":120000}"#
    }

    static var lines: [String] { (0..<count).map { line($0) } }

    static func text(_ lines: [String]) -> String { lines.joined(separator: "\n") + "\n" }

    func bisected(_ f: StopwatchServiceFixture) -> Int { f.queue.sync { f.history!.monthsBisected } }

    func since(_ f: StopwatchServiceFixture, _ since: Int64) -> [Interval] { f.historyIntervals(["since_ms": .int(since)]) }

    /// What `fstat` says of `path`.
    func status(_ path: String) throws -> FileStatus {
        let file = try FileDescriptor.open(path, O_RDONLY)
        defer { file.close() }
        return try file.status()
    }

    /// A call, then the clocks moved on by `seconds`.
    func run(_ f: StopwatchServiceFixture, _ method: String, _ parameters: JSONObject, advance seconds: Int64 = 0) {
        #expect(f.reply(method, parameters) != nil, "\(method) \(parameters)")
        f.time.advance(by: .seconds(seconds))
        f.wallClock.advance(by: seconds * 1_000)
    }

    @Test("intervals the daemon appends to a large month after the index learnt it (in end order, one stopped at an earlier instant, a correction) keep it bisected for since, with the answer of reading it whole")
    func appendsKeepMonthBisected() throws {
        try Self.text(Self.lines).write(toFile: month, atomically: false, encoding: .utf8)
        let f = fixture()
        // The index is built, learning the file: bisected.
        #expect(since(f, Self.end(3_000)).count == Self.count - 3_001)
        #expect(bisected(f) == 1)
        run(f, "Start", ["name": .string("a")], advance: 60)
        run(f, "Stop", ["name": .string("a")])
        run(f, "Start", ["name": .string("b")], advance: 60)
        run(f, "Start", ["name": .string("c")], advance: 60)
        run(f, "Stop", ["name": .string("b")])
        // c stopped at an instant before b's end: its line comes after b's, late.
        run(f, "Stop", ["name": .string("c"), "at_ms": .int(Self.now + 150_000)])
        // A correction line goes to the month's end too; the interval it tracks ends mid-month.
        run(f, "Track", ["name": .string("t"), "start_ms": .int(Self.end(2_000) + 10_000), "end_ms": .int(Self.end(2_000) + 20_000)])
        let lines = try String(contentsOfFile: month, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == Self.count + 4)
        #expect(lines.suffix(4).map { $0.contains(#""name":"c""#) } == [false, false, true, false])
        let all = f.historyIntervals()
        #expect(all.count == Self.count + 4)
        #expect(all.map { $0.endMs ?? 0 } == all.map { $0.endMs ?? 0 }.sorted())
        #expect(all.suffix(3).map(\.name) == ["a", "c", "b"])
        let sinces = stride(from: 400, to: Self.count, by: 400).map { Self.end($0) - 7 } + [Self.end(2_000) + 15_000]
            + [Self.now, Self.now + 60_000, Self.now + 150_000 - 1, Self.now + 150_000, Self.now + 179_999]
        for since in sinces {
            let before = bisected(f)
            #expect(self.since(f, since) == all.filter { ($0.endMs ?? 0) > since }, "since \(since)")
            // Still learnt, through the daemon's own appends: bisected.
            #expect(bisected(f) == before + 1, "since \(since)")
        }
    }

    /// How a test changes the month file from outside the daemon.
    enum OutsideChange: String, CaseIterable, Sendable {
        /// Written again in place, with more lines: the same file, another size.
        case rewrittenInPlace
        /// A copy of the same size renamed over it: another file, the same size.
        case sameSizeCopyRenamedOver
        /// Written again in place with the same size (an editor that keeps the inode, one
        /// digit fixed): the same file and size, only its change time differs.
        case sameSizeInPlace
    }

    @Test("a large month changed from outside after the index learnt it (rewritten in place with more lines, or a copy of the same size renamed over it) is read whole for since: a line amid early ones that ends late in the month is still answered, also once the daemon appended to it", arguments: OutsideChange.allCases)
    func monthChangedFromOutside(_ change: OutsideChange) throws {
        try Self.text(Self.lines).write(toFile: month, atomically: false, encoding: .utf8)
        let f = fixture()
        #expect(since(f, Self.end(3_000)).count == Self.count - 3_001)
        #expect(bisected(f) == 1)
        // Line 800, a fifth into the month, now ends nine tenths into it (the same number of
        // digits: the line keeps its length).
        let moved = 800
        let movedEnd = Self.end(3_600) + 60_000
        var changed = Self.lines
        changed[moved] = Self.line(moved, end: movedEnd)
        #expect(changed[moved].utf8.count == Self.lines[moved].utf8.count)
        let learnt = try status(month)
        switch change {
        case .rewrittenInPlace:
            changed += (0..<10).map { Self.line(Self.count + $0, end: Self.end(Self.count - 1) + Int64($0 + 1) * 1_000) }
            let handle = try #require(FileHandle(forWritingAtPath: month))
            handle.truncateFile(atOffset: 0)
            handle.write(Data(Self.text(changed).utf8))
            handle.closeFile()
            let now = try status(month)
            #expect(now.inode == learnt.inode && now.device == learnt.device && now.size != learnt.size)
        case .sameSizeCopyRenamedOver:
            try Self.text(changed).write(toFile: root + "/copy", atomically: false, encoding: .utf8)
            #expect(rename(root + "/copy", month) == 0)
            let now = try status(month)
            #expect(now.inode != learnt.inode && now.size == learnt.size)
        case .sameSizeInPlace:
            let handle = try #require(FileHandle(forWritingAtPath: month))
            handle.write(Data(Self.text(changed).utf8))
            handle.closeFile()
            let now = try status(month)
            #expect(now.inode == learnt.inode && now.device == learnt.device && now.size == learnt.size)
        }
        func check(lines: Int) {
            // Read whole: the moved line comes in file order, where it lies.
            let all = f.historyIntervals()
            #expect(all.count == lines)
            for since in [Self.end(1_000), Self.end(2_000), Self.end(3_000), Self.end(3_500), movedEnd - 1] {
                let answer = self.since(f, since)
                #expect(answer.contains { $0.id == Self.id(moved) }, "since \(since)")
                #expect(answer.count == all.filter { ($0.endMs ?? 0) > since }.count, "since \(since)")
                #expect(Set(answer.map(\.id)) == Set(all.filter { ($0.endMs ?? 0) > since }.map(\.id)), "since \(since)")
            }
            #expect(bisected(f) == 1)
        }
        check(lines: changed.count)
        // The daemon's own append does not make it learnt: the file before it was not.
        run(f, "Start", ["name": .string("a")], advance: 60)
        run(f, "Stop", ["name": .string("a")])
        check(lines: changed.count + 1)
    }

    @Test("a month file the daemon makes is learnt from its first line as it grows; a line appended from outside unlearns it, and a new index learns it again")
    func madeMonthLearnt() throws {
        let f = fixture()
        let november = HistoryMonth(epochMilliseconds: Self.now)
        func learnt() throws -> Bool {
            let file = try status(month)
            return f.queue.sync { f.history!.corrections?.hasLearnt(november, file: file, size: file.size) } == true
        }
        // The index, built before the month's file is made.
        #expect(f.historyIntervals().isEmpty)
        run(f, "Start", ["name": .string("a")], advance: 60)
        run(f, "Stop", ["name": .string("a")])
        #expect(try learnt())
        run(f, "Start", ["name": .string("a")], advance: 60)
        run(f, "Stop", ["name": .string("a")])
        #expect(try learnt())
        let handle = try #require(FileHandle(forWritingAtPath: month))
        handle.seekToEndOfFile()
        handle.write(Data((Self.line(1, end: Self.now - 1_000) + "\n").utf8))
        handle.closeFile()
        #expect(try !learnt())
        run(f, "Start", ["name": .string("a")], advance: 60)
        run(f, "Stop", ["name": .string("a")])
        #expect(try !learnt())
        // A daemon started anew reads it all.
        let again = fixture()
        #expect(again.historyIntervals().count == 4)
        let file = try status(month)
        #expect(again.queue.sync { again.history!.corrections?.hasLearnt(november, file: file, size: file.size) } == true)
    }

    @Test(
        "a month that could not be opened for a while, then can, unchanged, is cleared from the status by a since that reads it from a bisected offset",
        // A write lease (as a file server takes one) makes the daemon's non-blocking open
        // fail without changing the file; the kernel breaks it after lease-break-time.
        .enabled(if: FileLease.lastsLongEnough(10), "leases are broken after /proc/sys/fs/lease-break-time = \(FileLease.breakTime.map { "\($0) s" } ?? "(unreadable)"), too soon for this test (it needs 10 s)")
    )
    func restoredMonthClearedByBisectedRead() throws {
        try Self.text(Self.lines).write(toFile: month, atomically: false, encoding: .utf8)
        let f = fixture()
        #expect(since(f, Self.end(3_000)).count == Self.count - 3_001)
        #expect(bisected(f) == 1)
        let lease = try FileLease(month)
        #expect(f.historyReplies(["since_ms": .int(Self.end(3_000))]).last?.error == "io.stopwatchd.ProtocolError")
        #expect(f.queue.sync { f.history!.problem }?.contains("2023-11.jsonl") == true)
        // Open again: the same file, unchanged, as the index learnt it, so bisected.
        lease.release()
        #expect(since(f, Self.end(3_000)).count == Self.count - 3_001)
        #expect(bisected(f) == 2)
        #expect(f.queue.sync { f.history!.problem } == nil)
    }

    @Test("a month file deleted while the daemon keeps it, then made again by its next append: its old late lines do not come back")
    func monthMadeAgainForgetsTheOldFile() throws {
        // Line 2 ends before line 1: late.
        try Self.text([Self.line(0), Self.line(1), Self.line(2, end: Self.end(0) + 1)]).write(toFile: month, atomically: false, encoding: .utf8)
        let f = fixture()
        run(f, "Start", ["name": .string("a")], advance: 60)
        run(f, "Stop", ["name": .string("a")])
        #expect(f.historyIntervals().map(\.name) == ["n0", "n2", "n1", "a"])
        #expect(f.queue.sync { f.history!.corrections?.lateLineCount } == 1)
        // Deleted (by hand, a backup tool): the daemon finds its open file unlinked at the next
        // append and makes the month again.
        #expect(unlink(month) == 0)
        run(f, "Start", ["name": .string("b")], advance: 60)
        run(f, "Stop", ["name": .string("b")])
        #expect(f.historyIntervals().map(\.name) == ["b"])
    }
}
