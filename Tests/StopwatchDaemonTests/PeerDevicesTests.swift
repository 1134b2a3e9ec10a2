import Foundation
import Glibc
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
@testable import StopwatchDaemon
import TestSupport
import Testing
import Varlink

/// Reading the other devices' folders of the history folder (SPEC §4 "History across
/// devices"): the merge by end, one correction rule whatever order the files arrive in, the
/// skip list (never changing a peer's files), files that grow or are replaced, the `device`
/// filter, `open.json`, and memory. Manual clocks, a temporary folder; nothing sleeps.
@Suite("history across devices")
final class PeerDevicesTests {
    /// The history folder: `own/`, and the peers' folders beside it.
    let root: String
    let logged = Locked<[String]>([])
    /// 2023-11-14 22:13:20 UTC.
    static let now: Int64 = 1_700_000_000_000
    static let hour: Int64 = 3_600_000
    static let own = String(repeating: "a", count: 32)
    static let peerB = String(repeating: "b", count: 32)
    static let peerC = String(repeating: "c", count: 32)
    static let october = "2023-10.jsonl"
    static let november = "2023-11.jsonl"
    /// 2023-10-15 00:00 UTC, and 2023-11-05 00:00 UTC.
    static let midOctober: Int64 = 1_697_328_000_000
    static let earlyNovember: Int64 = 1_699_142_400_000

    init() throws {
        var template = Array("/tmp/swpeers-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    func fixture(
        limit: Int = 64, keepDays: Int? = nil, memory: HistoryMemory = HistoryMemory(limit: 32 * 1024 * 1024),
        own: String = PeerDevicesTests.own, name: String = "laptop", batchSize: Int = 10_000
    ) -> StopwatchServiceFixture {
        StopwatchServiceFixture(
            now: .seconds(100), historyDirectory: root + "/" + own, wallClock: ManualWallClock(Self.now), historyBatchSize: batchSize,
            historyKeepDays: keepDays,
            historyMemory: memory, logged: logged, device: (own, name, root, limit)
        )
    }

    static func id(_ number: UInt64) -> String {
        String(format: "%016llx", number)
    }

    static func line(_ number: UInt64, _ name: String, _ start: Int64, _ end: Int64, note: String? = nil) -> String {
        var bytes: [UInt8] = []
        HistoryLine.encode(Interval(id: id(number), name: name, startMs: start, endMs: end, elapsedMs: end - start, note: note), into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func amend(_ record: UInt64, made: Int64, _ number: UInt64, _ name: String, _ start: Int64, _ end: Int64) -> String {
        let interval = Interval(id: id(number), name: name, startMs: start, endMs: end, elapsedMs: end - start)
        var bytes: [UInt8] = []
        HistoryCorrection(record: id(record), madeMs: made, change: .form(.amend, id: id(number), interval: interval)).encode(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func delete(_ record: UInt64, made: Int64, _ number: UInt64) -> String {
        var bytes: [UInt8] = []
        HistoryCorrection(record: id(record), madeMs: made, change: .form(.delete, id: id(number), interval: nil)).encode(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func undo(_ record: UInt64, made: Int64, _ undone: UInt64) -> String {
        var bytes: [UInt8] = []
        HistoryCorrection(record: id(record), madeMs: made, change: .undo(record: id(undone))).encode(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    func folder(_ device: String) throws -> String {
        let path = root + "/" + device
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes `text` as `name` in `device`'s folder, replacing it by rename (a new inode, as
    /// Syncthing does) unless `inPlace`, which appends to the same file.
    func write(_ device: String, _ name: String, _ text: String, inPlace: Bool = false) throws {
        let path = try folder(device) + "/" + name
        if inPlace, let handle = FileHandle(forWritingAtPath: path) {
            handle.seekToEndOfFile()
            handle.write(Data(text.utf8))
            handle.closeFile()
        } else {
            let temporary = try folder(device) + "/.writing"
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, path) == 0 else { throw Errno(errno) }
        }
    }

    func named(_ device: String, _ name: String) throws {
        try write(device, HistoryLayout.deviceFileName, #"{"id":"\#(device)","name":"\#(name)","host":"h"}"# + "\n")
    }

    func problem(_ f: StopwatchServiceFixture) -> String {
        f.queue.sync { f.history!.problem } ?? ""
    }

    /// Every entry under `path` (not following links): its kind, size, mtime and bytes.
    func snapshot(_ path: String) throws -> [String: String] {
        var all: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: path)
        while let name = enumerator?.nextObject() as? String {
            var info = stat()
            guard lstat(path + "/" + name, &info) == 0 else { throw Errno(errno) }
            var text = "\(info.st_mode) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_ino)"
            if info.st_mode & S_IFMT == S_IFREG { text += " " + (try String(contentsOfFile: path + "/" + name, encoding: .isoLatin1)) }
            all[name] = text
        }
        return all
    }

    // MARK: The merge

    @Test("History merges every device's months in end order, late and corrected lines among them, each with its device's name (its id without device.json)")
    func mergeInEndOrder() throws {
        let m = Self.midOctober, n = Self.earlyNovember, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h) + Self.line(2, "own", m + 4 * h, m + 5 * h))
        try write(Self.own, Self.november, Self.line(3, "own", n, n + h))
        try named(Self.peerB, "desk")
        // B: a late line (ends before the line before it), and an amend of the own interval 1
        // moving it after everything in October.
        try write(
            Self.peerB, Self.october,
            Self.line(10, "b", m + 2 * h, m + 3 * h) + Self.line(11, "b", m + h / 2, m + h + h / 2)
                + Self.amend(100, made: Self.now - h, 1, "own", m + 6 * h, m + 7 * h)
        )
        try write(Self.peerB, Self.november, Self.line(12, "b", n + 2 * h, n + 3 * h))
        // C: no device.json: shown by its id.
        try write(Self.peerC, Self.october, Self.line(20, "c", m - h, m))
        let f = fixture()
        let history = f.historyIntervals()
        #expect(history.map(\.id) == [20, 11, 10, 2, 1, 3, 12].map(Self.id))
        #expect(history.map(\.device) == [Self.peerC, "desk", "desk", "laptop", "laptop", "laptop", "desk"])
        // Ends never go back.
        #expect(zip(history, history.dropFirst()).allSatisfy { ($0.endMs ?? 0) <= ($1.endMs ?? 0) })
        // The amended interval keeps its device: the one that recorded it.
        #expect(history.first { $0.id == Self.id(1) }?.startMs == m + 6 * h)
    }

    @Test("Replies cut at the batch size hold, one after the other, the same merge of three devices as one reply: each device's next line is kept across replies and turns")
    func mergeAcrossReplies() throws {
        let m = Self.midOctober, h = Self.hour
        /// 40 lines of `name`, an hour apart, each ending `offset` after the hour's third.
        func lines(_ first: UInt64, _ name: String, offset: Int64) -> String {
            (0..<40).map { index in
                let start = m + Int64(index) * h + offset
                return Self.line(first + UInt64(index), name, start, start + h / 3)
            }.joined()
        }
        try write(Self.own, Self.october, lines(0x100, "a", offset: 0))
        try write(Self.peerB, Self.october, lines(0x200, "b", offset: h / 4))
        try write(Self.peerC, Self.october, lines(0x300, "c", offset: h / 2))
        let whole = fixture().historyIntervals()
        #expect(whole.count == 120)
        #expect(whole.prefix(3).map(\.device) == ["laptop", Self.peerB, Self.peerC])
        let replies = fixture(batchSize: 7).historyReplies()
        let parts = replies.map { reply -> [Interval] in
            guard case .array(let values)? = reply.parameters["intervals"] else { return [] }
            return values.compactMap { try? Interval(json: $0) }
        }
        #expect(parts.count >= 18 && parts.allSatisfy { $0.count <= 7 })
        #expect(Array(parts.joined()) == whole)
    }

    @Test("The correction rule across devices: every order in which the same files arrive gives the same history as all of them present at once")
    func everyArrivalOrderGivesOneHistory() throws {
        let m = Self.midOctober, h = Self.hour
        let made = Self.now - 10 * h
        // The peers' files, each a unit a sync tool brings: B and C amend the same own
        // interval at the same instant (C, the greater id, wins the tie), B deletes C's
        // interval and undoes it, C amends B's interval (shown under B), a late line in C.
        let files: [(device: String, name: String, text: String)] = [
            (Self.peerB, Self.october, Self.line(10, "b", m + 2 * h, m + 3 * h) + Self.amend(101, made: made, 1, "own", m + 8 * h, m + 9 * h)),
            (Self.peerB, Self.november, Self.delete(102, made: made + 1, 20) + Self.undo(103, made: made + 2, 102)),
            (Self.peerC, Self.october, Self.line(20, "c", m + 5 * h, m + 6 * h) + Self.line(21, "c", m + 3 * h, m + 4 * h)
                + Self.amend(201, made: made, 1, "own", m + 10 * h, m + 11 * h)),
            (Self.peerC, Self.november, Self.amend(202, made: made + 3, 10, "b", m - 2 * h, m - h)),
        ]
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h))
        for file in files { try write(file.device, file.name, file.text) }
        let reference = fixture().historyIntervals()
        #expect(reference.map(\.id) == [10, 21, 20, 1].map(Self.id))
        #expect(reference.first { $0.id == Self.id(1) }?.startMs == m + 10 * h)
        #expect(reference.map(\.device) == [Self.peerB, Self.peerC, Self.peerC, "laptop"])
        for order in Self.permutations(Array(files.indices)) {
            try? FileManager.default.removeItem(atPath: root + "/" + Self.peerB)
            try? FileManager.default.removeItem(atPath: root + "/" + Self.peerC)
            let f = fixture()
            // The index is built before any peer file is there, then learns them one by one.
            _ = f.historyIntervals()
            for index in order {
                try write(files[index].device, files[index].name, files[index].text)
                _ = f.historyIntervals()
            }
            #expect(f.historyIntervals() == reference, "arrival order \(order)")
            // And a daemon started with them all reads the same.
            #expect(fixture().historyIntervals() == reference)
        }
    }

    @Test("Intervals of two devices that end together are in one order on every device (by start, then device id, then id), whichever device reads the files")
    func tiesOrderTheSameOnEveryDevice() throws {
        let m = Self.midOctober, h = Self.hour
        try named(Self.own, "laptop")
        try named(Self.peerB, "desk")
        // 1 and 10 end together, 10 started first; 2 and 11 end and start together (the
        // lesser device id first); 3 and 4 of one device: in file order.
        try write(Self.own, Self.october, Self.line(1, "a", m, m + h) + Self.line(2, "a", m + h, m + 2 * h))
        try write(
            Self.peerB, Self.october,
            Self.line(10, "b", m - h, m + h) + Self.line(11, "b", m + h, m + 2 * h) + Self.line(4, "b", m + 2 * h, m + 3 * h)
                + Self.line(3, "b", m + 2 * h, m + 3 * h)
        )
        let onOwn = fixture().historyIntervals()
        let onB = fixture(own: Self.peerB, name: "desk").historyIntervals()
        #expect(onOwn.map(\.id) == [10, 1, 2, 11, 4, 3].map(Self.id))
        #expect(onB == onOwn)
    }

    static func permutations(_ items: [Int]) -> [[Int]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index -> [[Int]] in
            var rest = items
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }

    // MARK: Never touching a peer's files

    @Test("A peer's torn last line, sync temporaries, conflict copies, .stversions, ~syncthing~ files, a month that is a link, FIFO or folder, and other names: skipped, counted in the status, never changed")
    func skipListIsCountedAndNeverChanged() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h) + #"{"id":"00000000"#)
        try named(Self.peerB, "desk")
        let b = try folder(Self.peerB)
        try write(Self.peerB, Self.october, Self.line(10, "b", m + h, m + 2 * h) + String(Self.line(11, "b", m + 2 * h, m + 3 * h).dropLast()))
        try write(Self.peerB, ".syncthing.2023-11.jsonl.tmp", Self.line(12, "b", m, m + 1))
        try write(Self.peerB, "2023-10.sync-conflict-20231015-101010-ABCDEFG.jsonl", Self.line(13, "b", m, m + 1))
        try write(Self.peerB, "~syncthing~2023-09.jsonl.tmp", Self.line(14, "b", m, m + 1))
        try write(Self.peerB, "notes.txt", "hello\n")
        try write(Self.peerC, Self.october, "not json\n" + String(repeating: "x", count: 70_000) + "\n" + Self.line(20, "c", m + 3 * h, m + 4 * h))
        try FileManager.default.createDirectory(atPath: b + "/.stversions", withIntermediateDirectories: true)
        try write(Self.peerB, ".stversions/2023-10.jsonl", Self.line(15, "b", m, m + 1))
        try FileManager.default.createDirectory(atPath: b + "/2023-08.jsonl", withIntermediateDirectories: true)
        #expect(mkfifo(b + "/2023-09.jsonl", 0o600) == 0)
        try write(Self.own, "target", Self.line(16, "b", m, m + 1))
        #expect(symlink(root + "/" + Self.own + "/target", b + "/2023-07.jsonl") == 0)
        let before = try snapshot(b)
        let f = fixture()
        // The start-up repair runs on this device's folder only.
        f.queue.sync { f.history!.start() }
        #expect(f.historyIntervals().map(\.id) == [1, 10, 20].map(Self.id))
        _ = f.historyIntervals()
        let said = problem(f)
        #expect(said.contains("device \(Self.peerC): skipped 2 lines that are not intervals"), "\(said)")
        for expected in [
            "device desk (\(Self.peerB))", "1 torn last line", "1 sync temporary file", "1 sync conflict copy", "1 .stversions folder",
            "1 ~syncthing~ file", "3 months that are not regular files", "1 unknown file",
        ] {
            #expect(said.contains(expected), "\(expected) in: \(said)")
        }
        #expect(try snapshot(b) == before)
        // This device's torn line was cut: the repair is this device's.
        #expect(try String(contentsOfFile: root + "/" + Self.own + "/" + Self.october, encoding: .utf8) == Self.line(1, "own", m, m + h))
    }

    @Test("Pruning (--history-days) and Undo are this device's only: a peer's old month stays, a peer's records are not taken back")
    func pruneAndUndoAreThisDevicesOnly() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, "2000-01.jsonl", Self.line(1, "own", 946_684_800_000, 946_684_800_000 + h))
        try write(Self.peerB, "2000-01.jsonl", Self.line(10, "b", 946_684_800_000, 946_684_800_000 + h))
        try write(Self.peerB, Self.october, Self.line(11, "b", m, m + h) + Self.delete(100, made: Self.now, 11))
        let before = try snapshot(try folder(Self.peerB))
        let f = fixture(keepDays: 30)
        f.queue.sync { f.history!.start() }
        #expect(!FileManager.default.fileExists(atPath: root + "/" + Self.own + "/2000-01.jsonl"))
        #expect(try snapshot(try folder(Self.peerB)) == before)
        #expect(f.historyIntervals().map(\.id) == [Self.id(10)])
        #expect(f.error("Undo") == "io.stopwatchd.NothingToUndo")
    }

    @Test("A link or a file where a peer's folder should be is not followed or read")
    func peerFolderThatIsALink() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h))
        try write(Self.peerC, Self.october, Self.line(20, "c", m, m + 1))
        #expect(symlink(root + "/" + Self.peerC, root + "/" + Self.peerB) == 0)
        let f = fixture()
        #expect(f.historyIntervals().map(\.id) == [20, 1].map(Self.id))
        #expect(problem(f).contains("device \(Self.peerB): skipped 1 device folder that is a link or not a folder"))
    }

    @Test("A peer's device.json name that --device-name would refuse (a newline that would add sd_notify fields, a control character, a '/', a space at an end, too long) is not used: the device is shown by its id, in History and in the status, which stays one line", arguments: [
        "desk\nWATCHDOG=trigger", "desk\u{7}", "desk/b", " desk", String(repeating: "d", count: 65),
    ])
    func peerNameThatIsNotAName(_ name: String) throws {
        let m = Self.midOctober, h = Self.hour
        var json = Array(#"{"id":"\#(Self.peerB)","name":"#.utf8)
        HistoryLine.appendString(name, to: &json)
        json += Array(#","host":"h"}"#.utf8) + [UInt8(ascii: "\n")]
        try write(Self.peerB, HistoryLayout.deviceFileName, String(decoding: json, as: UTF8.self))
        // A torn last line and a file of another name: something to say in the status.
        try write(Self.peerB, Self.october, Self.line(10, "b", m, m + h) + "{\"id\"")
        try write(Self.peerB, "x\nWATCHDOG=trigger", "")
        let f = fixture()
        #expect(f.historyIntervals().map(\.device) == [Self.peerB])
        let said = problem(f)
        #expect(said.contains("device \(Self.peerB): skipped 1 torn last line, 1 unknown file"), "\(said)")
        #expect(!said.contains("\n") && !said.contains("WATCHDOG") && !said.contains("desk"), "\(said)")
    }

    // MARK: Files that change

    @Test("A peer's month that grows in place: only what follows its last whole line is read, a torn last line once completed included")
    func peerMonthGrowsInPlace() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h))
        let third = Self.line(12, "b", m + 4 * h, m + 5 * h)
        try write(Self.peerB, Self.october, Self.line(10, "b", m + h, m + 2 * h) + Self.line(11, "b", m + 2 * h, m + 3 * h) + third.prefix(20))
        let f = fixture()
        #expect(f.historyIntervals().map(\.id) == [1, 10, 11].map(Self.id))
        let learnt = f.queue.sync { f.history!.peers.peers[Self.peerB]?.months[HistoryMonth(year: 2023, month: 10)!] }
        let firstLines = Int64(Self.line(10, "b", m + h, m + 2 * h).utf8.count + Self.line(11, "b", m + 2 * h, m + 3 * h).utf8.count)
        #expect(learnt?.wholeEnd == firstLines && learnt?.size == firstLines + 20)
        #expect(problem(f).contains("1 torn last line"))
        // The rest of the line, and a correction deleting line 10, appended to the same file.
        try write(Self.peerB, Self.october, String(third.dropFirst(20)) + Self.delete(100, made: Self.now, 10), inPlace: true)
        #expect(f.historyIntervals().map(\.id) == [1, 11, 12].map(Self.id))
        let grown = f.queue.sync { f.history!.peers.peers[Self.peerB]?.months[HistoryMonth(year: 2023, month: 10)!] }
        #expect(grown?.inode == learnt?.inode && grown?.wholeEnd == grown?.size)
        // Its first lines not read again (they would read as late: ending before the last read).
        #expect(f.queue.sync { f.history!.corrections?.lateLineCount } == 0)
        #expect(!problem(f).contains("torn"))
    }

    @Test("A peer's month replaced by a longer file (a new inode) is read again, nothing twice; one replaced by a shorter one rebuilds the index")
    func peerMonthReplaced() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h))
        let first = Self.line(10, "b", m + h, m + 2 * h) + Self.line(13, "b", m + 2 * h, m + 2 * h + h / 2)
            + Self.amend(100, made: Self.now, 1, "own", m + 3 * h, m + 4 * h) + #"{"op":"amend"}"# + "\n"
        try write(Self.peerB, Self.october, first)
        let f = fixture()
        #expect(f.historyIntervals().map(\.id) == [10, 13, 1].map(Self.id))
        let longer = first + Self.line(11, "b", m + 5 * h, m + 6 * h)
        try write(Self.peerB, Self.october, longer)
        let history = f.historyIntervals()
        #expect(history.map(\.id) == [10, 13, 1, 11].map(Self.id))
        #expect(history.first { $0.id == Self.id(1) }?.startMs == m + 3 * h)
        // Read again from its start, its lines in end order are not taken for late ones.
        #expect(f.queue.sync { f.history!.corrections?.lateLineCount } == 0)
        // Nor its damaged line counted twice.
        #expect(f.queue.sync { f.history!.corrections?.damagedLines } == 0 && problem(f).contains("1 damaged correction line"))
        // Shorter: the amend is gone, and so is its effect.
        try write(Self.peerB, Self.october, Self.line(10, "b", m + h, m + 2 * h))
        #expect(f.historyIntervals().map(\.id) == [1, 10].map(Self.id))
        #expect(f.historyIntervals().first?.startMs == m)
    }

    /// What `fstat` says of `path`.
    func status(_ path: String) throws -> FileStatus {
        let file = try FileDescriptor.open(path, O_RDONLY)
        defer { file.close() }
        return try file.status()
    }

    /// Writes `text` over the start of the file at `path`, in place (the same inode, `text` as
    /// long as the file: its size kept), until its change time is not `learnt`'s: the kernel
    /// moves it at its clock's tick, so a write in the same tick as the last read keeps it.
    func rewriteInPlace(_ path: String, _ text: String, unlike learnt: FileStatus) throws {
        for _ in 0..<1_000_000 {
            let handle = try #require(FileHandle(forWritingAtPath: path))
            handle.write(Data(text.utf8))
            handle.closeFile()
            if try status(path).changeTime != learnt.changeTime { break }
        }
        let now = try status(path)
        #expect(now.inode == learnt.inode && now.device == learnt.device && now.size == learnt.size && now.changeTime != learnt.changeTime)
    }

    @Test("A peer's month rewritten in place at the same size (rsync --inplace): its change time moved, so it is read again")
    func peerMonthRewrittenInPlaceAtSameSize() throws {
        let m = Self.midOctober, h = Self.hour
        let path = try folder(Self.peerB) + "/" + Self.october
        try write(Self.peerB, Self.october, Self.line(10, "b", m, m + h) + Self.amend(100, made: Self.now - h, 10, "x", m, m + h))
        let f = fixture()
        #expect(f.historyIntervals().map(\.name) == ["x"])
        // The same bytes but the amend's: a later one, naming it "y".
        let rewritten = Self.line(10, "b", m, m + h) + Self.amend(101, made: Self.now - h + 1, 10, "y", m, m + h)
        try rewriteInPlace(path, rewritten, unlike: try status(path))
        #expect(f.historyIntervals().map(\.name) == ["y"])
    }

    /// What `refresh` opened of the peers' files, and the folders it listed, so far.
    func refreshCounts(_ f: StopwatchServiceFixture) -> (opened: Int, listed: Int) {
        f.queue.sync { (f.history!.peers.filesOpened, f.history!.peers.foldersListed) }
    }

    @Test("A call where no peer's file changed opens none of them (months, device.json, open.json) and lists no folder; a month replaced by a rename between two calls is read again, and nothing else")
    func unchangedPeerFilesAreNotOpenedAgain() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h))
        try named(Self.peerB, "desk")
        try write(Self.peerB, Self.october, Self.line(10, "b", m + h, m + 2 * h))
        try write(Self.peerB, Self.november, Self.line(12, "b", Self.earlyNovember, Self.earlyNovember + h))
        try write(Self.peerB, PeerDevices.openFileName, #"{"intervals":[{"id":"\#(Self.id(13))","name":"b","start_ms":\#(Self.now - h),"elapsed_ms":\#(h)}]}"#)
        let f = fixture()
        // The files were all just written: their status is trusted at once.
        f.queue.sync { f.history!.peers.settledAfter = 0 }
        #expect(f.historyIntervals().map(\.id) == [1, 10, 12, 13].map(Self.id))
        let first = refreshCounts(f)
        // Two months, device.json, open.json; the history folder and the peer's folder.
        #expect(first.opened == 4 && first.listed == 2)
        #expect(f.historyIntervals().map(\.id) == [1, 10, 12, 13].map(Self.id))
        #expect(f.historyIntervals().first { $0.id == Self.id(13) }?.device == "desk")
        let second = refreshCounts(f)
        #expect(second.opened == first.opened && second.listed == first.listed)
        // October replaced by Syncthing's rename (a new inode), one line longer: read again, alone.
        try write(Self.peerB, Self.october, Self.line(10, "b", m + h, m + 2 * h) + Self.line(11, "b", m + 3 * h, m + 4 * h))
        #expect(f.historyIntervals().map(\.id) == [1, 10, 11, 12, 13].map(Self.id))
        #expect(refreshCounts(f).opened == second.opened + 1)
        #expect(f.queue.sync { f.history!.corrections?.lateLineCount } == 0)
    }

    @Test("With no other device's folder, History lists the history folder at its first call and not again while the folder is unchanged")
    func noPeerFolderCostsNoListing() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h))
        let f = fixture()
        f.queue.sync { f.history!.peers.settledAfter = 0 }
        #expect(f.historyIntervals().map(\.id) == [Self.id(1)])
        #expect(f.historyIntervals().map(\.id) == [Self.id(1)])
        #expect(refreshCounts(f).listed == 1 && refreshCounts(f).opened == 0)
    }

    @Test("A folder or file whose change time is not yet settled is read again at the next call: a change in the same tick of the kernel's clock keeps the status")
    func unsettledStatusIsNotTrusted() throws {
        let m = Self.midOctober, h = Self.hour
        try named(Self.peerB, "desk")
        try write(Self.peerB, Self.october, Self.line(10, "b", m + h, m + 2 * h))
        let f = fixture()
        // Nothing written an hour before it is read counts as settled.
        f.queue.sync { f.history!.peers.settledAfter = 3_600_000_000_000 }
        _ = f.historyIntervals()
        let first = refreshCounts(f)
        _ = f.historyIntervals()
        let second = refreshCounts(f)
        // The month by its own status (an inode, a size: a rename or append changes them);
        // device.json and the folders every time.
        #expect(second.opened == first.opened + 1 && second.listed == first.listed + 2)
    }

    @Test("A peer's large month is bisected for since while the descriptor opened is the file learnt (device, inode, change time, size); one rewritten in place after the call's index was taken is read whole")
    func peerMonthBisectedOnlyWhileLearnt() throws {
        /// 2023-10-01 00:00 UTC; line `number` ends every 5 minutes from it (about 400 KB of
        /// lines, past `HistoryStream.bisectedSize`).
        let october: Int64 = 1_696_118_400_000
        func end(_ number: Int) -> Int64 { october + Int64(number + 1) * 300_000 }
        let moved = 800
        func text(moving: Bool) -> String {
            (0..<4_000).map { number in
                let ends = moving && number == moved ? end(3_600) + 60_000 : end(number)
                return Self.line(UInt64(0x1000 + number), "b", ends - 120_000, ends)
            }.joined()
        }
        let path = try folder(Self.peerB) + "/" + Self.october
        try write(Self.peerB, Self.october, text(moving: false))
        let f = fixture()
        let since = end(3_000)
        let bisected = { f.queue.sync { f.history!.monthsBisected } }
        #expect(f.historyIntervals(["since_ms": .int(since)]).count == 999)
        #expect(bisected() == 1)
        // Line 800, early in the file, made to end late in the month (the same length) in
        // place, after the call took its index (what `PeerDevices` learnt) and before it opens
        // the month: the descriptor's status tells it.
        let learnt = try status(path)
        let replies = f.historyReplies(["since_ms": .int(since)]) {
            #expect(throws: Never.self) { try self.rewriteInPlace(path, text(moving: true), unlike: learnt) }
        }
        let ids = replies.flatMap { reply -> [String] in
            guard case .array(let values)? = reply.parameters["intervals"] else { return [] }
            return values.compactMap { try? Interval(json: $0).id }
        }
        #expect(ids.contains(Self.id(UInt64(0x1000 + moved))))
        #expect(ids.count == 1_000)
        #expect(bisected() == 1)
    }

    @Test("A peer's line longer than 64 KiB is refused where the reads cut it after its start was kept (a delete padded past the limit deletes nothing), and counted")
    func peerLineTooLongOnceWhole() throws {
        let m = Self.midOctober, h = Self.hour
        let first = Self.line(10, "b", m, m + h)
        // Its start kept from four 16 KiB reads is under the limit; whole, it is past it.
        let record = Self.delete(100, made: Self.now - h, 10)
        let padded = String(record.dropLast(2)) + String(repeating: " ", count: 65_600 - record.utf8.count) + "}\n"
        #expect(record.hasSuffix("}\n") && padded.utf8.count == 65_600 && first.utf8.count < 16 * 1024)
        try write(Self.peerB, Self.october, first + padded)
        let f = fixture()
        #expect(f.historyIntervals().map(\.id) == [Self.id(10)])
        #expect(problem(f).contains("1 line that is not an interval"), "\(problem(f))")
    }

    @Test("Amend and Delete find another device's interval by its id, write the correction in this device's folder only, and it stays shown under its device")
    func amendAPeersInterval() throws {
        let m = Self.midOctober, h = Self.hour
        try named(Self.peerB, "desk")
        try write(Self.peerB, Self.october, Self.line(10, "b", m + h, m + 2 * h))
        let before = try snapshot(try folder(Self.peerB))
        let f = fixture()
        let reply = f.reply("Amend", ["id": .string(String(Self.id(10).prefix(8))), "note": .string("moved")])
        let amended = try #require(reply?["interval"].flatMap { try? Interval(json: $0) })
        #expect(amended.device == "desk" && amended.note == "moved")
        #expect(f.historyIntervals().map(\.device) == ["desk"])
        #expect(f.historyIntervals().first?.note == "moved")
        #expect(try snapshot(try folder(Self.peerB)) == before)
        let own = try String(contentsOfFile: root + "/" + Self.own + "/" + Self.november, encoding: .utf8)
        #expect(own.contains(#""op":"amend""#) && own.contains(Self.id(10)))
        // A daemon started anew shows it under its device too.
        #expect(fixture().historyIntervals().map(\.device) == ["desk"])
        #expect(f.reply("Delete", ["id": .string(Self.id(10))]) != nil)
        #expect(f.historyIntervals().isEmpty)
        // Undo takes back this device's delete only.
        #expect(f.reply("Undo")?["undone"] == .string("delete"))
        #expect(f.historyIntervals().map(\.note) == ["moved"])
    }

    // MARK: Filter, open intervals, limits

    @Test("History's device filter takes a device's name or its full id; another type is refused")
    func deviceFilter() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h))
        try named(Self.peerB, "desk")
        try write(Self.peerB, Self.october, Self.line(10, "b", m + h, m + 2 * h))
        try write(Self.peerC, Self.october, Self.line(20, "c", m + 2 * h, m + 3 * h) + Self.amend(200, made: Self.now, 10, "b", m - h, m))
        let f = fixture()
        #expect(f.historyIntervals(["device": .string("desk")]).map(\.id) == [Self.id(10)])
        #expect(f.historyIntervals(["device": .string(Self.peerB)]).map(\.id) == [Self.id(10)])
        #expect(f.historyIntervals(["device": .string("laptop")]).map(\.id) == [Self.id(1)])
        #expect(f.historyIntervals(["device": .string(Self.peerC)]).map(\.id) == [Self.id(20)])
        #expect(f.historyIntervals(["device": .string("bbbb")]).isEmpty)
        #expect(f.error("History", ["device": .int(1)]) == "org.varlink.service.InvalidParameter")
    }

    @Test("Two devices of one name: the name filter takes both (corrected and open intervals too), each id only its own")
    func deviceFilterWithSharedName() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h))
        try named(Self.peerB, "desk")
        try named(Self.peerC, "desk")
        try write(Self.peerB, Self.october, Self.line(10, "b", m + h, m + 2 * h))
        // C amends B's interval (shown under B) and counts one of its own.
        try write(Self.peerC, Self.october, Self.line(20, "c", m + 2 * h, m + 3 * h) + Self.amend(200, made: Self.now, 10, "b", m + 4 * h, m + 5 * h))
        try write(Self.peerC, PeerDevices.openFileName, #"{"intervals":[{"id":"\#(Self.id(21))","name":"c","start_ms":\#(Self.now - h),"elapsed_ms":\#(h)}]}"#)
        let f = fixture()
        #expect(f.historyIntervals(["device": .string("desk")]).map(\.id) == [20, 10, 21].map(Self.id))
        #expect(f.historyIntervals(["device": .string(Self.peerB)]).map(\.id) == [Self.id(10)])
        #expect(f.historyIntervals(["device": .string(Self.peerC)]).map(\.id) == [20, 21].map(Self.id))
    }

    @Test("open.json: written in this device's folder at every start and stop; a peer's counting intervals shown from theirs, without an end, after the ended ones; one too large skipped")
    func openIntervals() throws {
        let m = Self.midOctober, h = Self.hour
        try named(Self.peerB, "desk")
        try write(Self.peerB, Self.october, Self.line(10, "b", m, m + h))
        try write(Self.peerB, PeerDevices.openFileName, #"{"intervals":[{"id":"\#(Self.id(11))","name":"b","start_ms":\#(Self.now - h),"elapsed_ms":\#(h),"note":"n"}]}"#)
        let f = fixture()
        let path = root + "/" + Self.own + "/" + PeerDevices.openFileName
        _ = f.reply("Start", ["name": .string("work")])
        // Written in the queue's next turn, on the writer's queue.
        f.queue.sync {}
        f.history!.openIntervalsFile.wait()
        let open = try String(contentsOfFile: path, encoding: .utf8)
        #expect(open.hasPrefix(#"{"written_ms":\#(Self.now),"intervals":[{"id":""#) && open.contains(#""name":"work""#) && !open.contains("end_ms"))
        let history = f.historyIntervals()
        #expect(history.map(\.name) == ["b", "b", "work"])
        #expect(history[1].endMs == nil && history[1].device == "desk" && history[1].note == "n")
        #expect(history[2].endMs == nil && history[2].device == "laptop")
        #expect(f.historyIntervals(["device": .string("laptop")]).map(\.name) == ["work"])
        _ = f.reply("Stop", ["name": .string("work")])
        // Within the window of the last write: at its end.
        f.time.advance(by: OpenIntervalsSchedule.window)
        f.history!.openIntervalsFile.wait()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == #"{"written_ms":\#(Self.now),"intervals":[]}"# + "\n")
        try write(Self.peerB, PeerDevices.openFileName, "{" + String(repeating: " ", count: PeerDevices.openFileLimit) + "}")
        #expect(f.historyIntervals().filter { $0.endMs == nil }.isEmpty)
        #expect(problem(f).contains("1 open.json too large or damaged"))
    }

    @Test("A peer's open interval counts on from its open.json's written_ms to now by this device's wall clock (never back, for a clock ahead); one without written_ms as written")
    func peerOpenIntervalCountsOnSinceWritten() throws {
        let h = Self.hour
        func open(written: Int64?) throws {
            let stamp = written.map { #""written_ms":\#($0),"# } ?? ""
            try write(Self.peerB, PeerDevices.openFileName, #"{\#(stamp)"intervals":[{"id":"\#(Self.id(11))","name":"b","start_ms":\#(Self.now - 3 * h),"elapsed_ms":\#(h)}]}"#)
        }
        try open(written: Self.now - 2 * h)
        let f = fixture()
        #expect(f.historyIntervals().map(\.elapsedMs) == [3 * h])
        f.wallClock.advance(by: h)
        #expect(f.historyIntervals().map(\.elapsedMs) == [4 * h])
        try open(written: f.wallClock.nowMilliseconds() + h)
        #expect(f.historyIntervals().map(\.elapsedMs) == [h])
        try open(written: nil)
        #expect(f.historyIntervals().map(\.elapsedMs) == [h])
    }

    @Test("A peer's interval its months show ended is not shown open too, whether its month arrives before the open.json that drops it or after the one that lists it")
    func peerIntervalEndedIsNotOpenToo() throws {
        let n = Self.now, h = Self.hour
        let listed = #"{"written_ms":\#(n - 2 * h),"intervals":[{"id":"\#(Self.id(11))","name":"b","start_ms":\#(n - 2 * h),"elapsed_ms":0}]}"#
        let first = Self.line(10, "b", n - 3 * h, n - 2 * h - 1)
        let ended = Self.line(11, "b", n - 2 * h, n - h)
        try write(Self.peerB, PeerDevices.openFileName, listed)
        try write(Self.peerB, Self.november, first)
        let f = fixture()
        #expect(f.historyIntervals().map(\.endMs) == [n - 2 * h - 1, nil])
        // Its month arrives, the open.json still listing it.
        try write(Self.peerB, Self.november, first + ended)
        #expect(f.historyIntervals().map(\.endMs) == [n - 2 * h - 1, n - h])
        // A daemon that learnt the month while nothing was open there, then the old open.json
        // arrives (its earliest start before every line learnt: they are looked at again).
        try FileManager.default.removeItem(atPath: root + "/" + Self.peerB + "/" + PeerDevices.openFileName)
        let g = fixture()
        #expect(g.historyIntervals().map(\.endMs) == [n - 2 * h - 1, n - h])
        try write(Self.peerB, PeerDevices.openFileName, listed)
        #expect(g.historyIntervals().map(\.endMs) == [n - 2 * h - 1, n - h])
        // Another id, of no line: shown open.
        try write(Self.peerB, PeerDevices.openFileName, listed.replacingOccurrences(of: Self.id(11), with: Self.id(12)))
        #expect(g.historyIntervals().map(\.id) == [10, 11, 12].map(Self.id))
    }

    @Test("--history-devices caps the peers read, the first by id; the rest are said in the status")
    func deviceLimit() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.peerB, Self.october, Self.line(10, "b", m, m + h))
        try write(Self.peerC, Self.october, Self.line(20, "c", m, m + h))
        let f = fixture(limit: 1)
        #expect(f.historyIntervals().map(\.id) == [Self.id(10)])
        #expect(problem(f).contains("1 other device not read (--history-devices 1)"))
    }

    @Test("A peer's 16 KiB read buffer is taken from the budget only once one of its months is opened: none for peers whose months cannot match")
    func peerBufferTakenWhenAMonthOpens() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.peerB, Self.october, Self.line(10, "b", m, m + h))
        try write(Self.peerC, Self.october, Self.line(20, "c", m, m + h))
        let memory = HistoryMemory(limit: 32 * 1024 * 1024)
        let f = fixture(memory: memory)
        var before = -1
        // No October month can hold an interval since November: no buffer.
        let replies = f.historyReplies(["since_ms": .int(Self.earlyNovember)]) { before = f.queue.sync { memory.used } }
        #expect(replies.count == 1 && before == 0)
        // Every month read: both taken as their months opened, given back at their ends.
        #expect(f.historyIntervals().map(\.id) == [10, 20].map(Self.id))
        #expect(f.queue.sync { memory.used } == 0)
    }

    @Test("A peer folder of garbage (2,000 empty files, a 24 MB month of one line): this device's intervals are served, History's memory stays in its budget")
    func garbageKeepsMemoryBounded() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h))
        let b = try folder(Self.peerB)
        for index in 0..<2000 { _ = FileManager.default.createFile(atPath: b + "/empty-\(index)", contents: nil) }
        let big = b + "/" + Self.october
        _ = FileManager.default.createFile(atPath: big, contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: big))
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 1024 * 1024)
        for _ in 0..<24 { handle.write(chunk) }
        handle.write(Data("\n".utf8))
        handle.closeFile()
        let memory = HistoryMemory(limit: 256 * 1024)
        let f = fixture(memory: memory)
        // The budget's account, not the resident size: the test process's other suites run
        // meanwhile, and a sanitizer's allocator keeps what is freed. Over the budget by one
        // peer's 16 KiB buffer at most (taken when its month opens, `DeviceLines`); the line
        // carried across reads is at most 64 KiB (`LineSplitterTests`).
        for _ in 0..<4 { #expect(f.historyIntervals().map(\.id) == [Self.id(1)]) }
        #expect(f.queue.sync { memory.peak } <= memory.limit + 16 * 1024)
        #expect(f.queue.sync { memory.used } == 0)
        #expect(problem(f).contains("2000 unknown files"))
    }

}
