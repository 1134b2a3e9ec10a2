import Foundation
import Glibc
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
@testable import StopwatchDaemon
import TestSupport
import Testing
import Varlink

/// Reading other devices' folders when things go wrong (SPEC §4 "History across devices"): a
/// month replaced by different content, a read that fails midway, a damaged `open.json`, a
/// folder of garbage, a clock far ahead; and how often this device's own `open.json` is
/// written. The fixtures and helpers of `PeerDevicesTests`; manual clocks, nothing sleeps.
extension PeerDevicesTests {
    // MARK: Months that change

    @Test("A peer's month replaced by content as long or longer that changed a line learnt: what the old line taught (a record, a late line) is gone")
    func peerMonthReplacedByChangedContent() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h))
        // B's amend of interval 1 (renaming it "x"), and a late line 11 (it ends before 10).
        let amend = Self.amend(100, made: Self.now - h, 1, "x", m, m + h)
        let first = Self.line(10, "b", m + 3 * h, m + 4 * h) + Self.line(11, "b", m + h, m + 2 * h) + amend
        try write(Self.peerB, Self.october, first)
        let f = fixture()
        #expect(f.historyIntervals().map(\.name) == ["x", "b", "b"])
        #expect(f.queue.sync { f.history!.corrections?.lateLineCount } == 1)
        // Replaced (a new inode) by the same length: the amend now of interval 10, line 11 now
        // ending after 10 (not late), its digits changed in place.
        let changed = Self.line(10, "b", m + 3 * h, m + 4 * h) + Self.line(11, "b", m + 5 * h, m + 6 * h)
            + Self.amend(100, made: Self.now - h, 10, "y", m + 3 * h, m + 4 * h)
        #expect(changed.utf8.count == first.utf8.count)
        try write(Self.peerB, Self.october, changed)
        #expect(f.historyIntervals().map(\.name) == ["own", "y", "b"])
        #expect(f.queue.sync { f.history!.corrections?.lateLineCount } == 0)
        // And once more, longer: the amend taken out, a line added.
        try write(Self.peerB, Self.october, Self.line(10, "b", m + 3 * h, m + 4 * h) + Self.line(11, "b", m + 5 * h, m + 6 * h) + Self.line(12, "b", m + 7 * h, m + 8 * h) + Self.line(13, "b", m + 9 * h, m + 10 * h))
        #expect(f.historyIntervals().map(\.id) == [1, 10, 11, 12, 13].map(Self.id))
        #expect(f.historyIntervals().map(\.name) == ["own", "b", "b", "b", "b"])
        // Replaced by the same lines and more (Syncthing's append): read from where it stopped.
        try write(Self.peerB, Self.october, Self.line(10, "b", m + 3 * h, m + 4 * h) + Self.line(11, "b", m + 5 * h, m + 6 * h) + Self.line(12, "b", m + 7 * h, m + 8 * h) + Self.line(13, "b", m + 9 * h, m + 10 * h) + Self.delete(101, made: Self.now, 12))
        #expect(f.historyIntervals().map(\.id) == [1, 10, 11, 13].map(Self.id))
    }

    @Test("A peer's month replaced by the same lines and more is read only from where the last read stopped: the index is not built anew")
    func peerMonthAppendedByReplacingIsNotRebuilt() throws {
        let m = Self.midOctober, h = Self.hour
        let first = Self.line(10, "b", m, m + h)
        try write(Self.peerB, Self.october, first)
        let f = fixture()
        #expect(f.historyIntervals().map(\.id) == [Self.id(10)])
        let learnt = f.queue.sync { f.history!.peers.peers[Self.peerB]?.months[HistoryMonth(year: 2023, month: 10)!] }
        try write(Self.peerB, Self.october, first + Self.line(11, "b", m + h, m + 2 * h))
        #expect(f.historyIntervals().map(\.id) == [10, 11].map(Self.id))
        let grown = f.queue.sync { f.history!.peers.peers[Self.peerB]?.months[HistoryMonth(year: 2023, month: 10)!] }
        #expect(grown?.inode != learnt?.inode && grown?.wholeEnd == grown?.size)
        #expect(!logged.withLock { $0 }.contains { $0.contains("built anew") })
    }

    // MARK: Reads that fail

    @Test("A peer's month whose read fails midway is read again whole next time: its damaged and bad lines counted once, none said before it is read, none of its lines taken for late")
    func peerReadFailingMidwayCountsOnce() throws {
        let m = Self.midOctober
        try write(Self.own, Self.october, Self.line(1, "own", m - 60_000, m))
        // Past two 16 KiB reads: a damaged correction and a bad line in the first, another
        // damaged correction at the end.
        var text = #"{"op":"amend"}"# + "\n" + "not json\n"
        for number in 0..<400 { text += Self.line(UInt64(0x100 + number), "b", m + Int64(number) * 60_000, m + Int64(number) * 60_000 + 30_000) }
        text += #"{"op":"delete"}"# + "\n"
        #expect(text.utf8.count > 2 * 16 * 1024)
        try write(Self.peerB, Self.october, text)
        let f = fixture()
        f.queue.sync {
            f.history!.peers.readChunk = { file, buffer, offset throws(Errno) in
                guard offset == 0 else { throw Errno(EIO) }
                return try file.read(into: buffer, at: offset)
            }
        }
        #expect(f.historyIntervals().map(\.id) == [Self.id(1)])
        #expect(problem(f).contains("1 unreadable month"))
        #expect(!problem(f).contains("damaged") && !problem(f).contains("not an interval"))
        f.queue.sync { f.history!.peers.readChunk = { file, buffer, offset throws(Errno) in try file.read(into: buffer, at: offset) } }
        #expect(f.historyIntervals().count == 401)
        #expect(problem(f).contains("1 line that is not an interval, 2 damaged correction lines"), "\(problem(f))")
        #expect(!problem(f).contains("unreadable"))
        #expect(f.queue.sync { f.history!.corrections?.lateLineCount } == 0)
        // Again: the same.
        #expect(f.historyIntervals().count == 401)
        #expect(problem(f).contains("1 line that is not an interval, 2 damaged correction lines"))
    }

    @Test("A peer's month that grew, whose read of what it grew fails midway, is read again from where it was learnt: counted once")
    func peerGrownReadFailingMidwayCountsOnce() throws {
        let m = Self.midOctober
        try write(Self.peerB, Self.october, #"{"op":"amend"}"# + "\n" + Self.line(0x100, "b", m, m + 1))
        let f = fixture()
        #expect(f.historyIntervals().count == 1)
        #expect(problem(f).contains("1 damaged correction line"))
        let learntEnd = try #require(f.queue.sync { f.history!.peers.peers[Self.peerB]?.months[HistoryMonth(year: 2023, month: 10)!]?.wholeEnd })
        var more = #"{"op":"undo"}"# + "\n"
        for number in 1..<400 { more += Self.line(UInt64(0x100 + number), "b", m + Int64(number) * 60_000, m + Int64(number) * 60_000 + 1) }
        try write(Self.peerB, Self.october, more, inPlace: true)
        f.queue.sync {
            f.history!.peers.readChunk = { file, buffer, offset throws(Errno) in
                guard offset <= learntEnd else { throw Errno(EIO) }
                return try file.read(into: buffer, at: offset)
            }
        }
        #expect(f.historyIntervals().count == 1)
        #expect(problem(f).contains("1 damaged correction line,") && problem(f).contains("1 unreadable month"))
        f.queue.sync { f.history!.peers.readChunk = { file, buffer, offset throws(Errno) in try file.read(into: buffer, at: offset) } }
        #expect(f.historyIntervals().count == 400)
        #expect(problem(f).contains("2 damaged correction lines") && !problem(f).contains("unreadable"))
        #expect(f.queue.sync { f.history!.corrections?.lateLineCount } == 0)
    }

    // MARK: open.json

    @Test("A peer's damaged open.json: the status is the same at every call (one count, one message), and the peer's ended intervals are still shown")
    func damagedPeerOpenIsStable() throws {
        let m = Self.midOctober, h = Self.hour
        try named(Self.peerB, "desk")
        try write(Self.peerB, Self.october, Self.line(10, "b", m, m + h) + Self.line(11, "b", m + h, m + 2 * h))
        try write(Self.peerB, PeerDevices.openFileName, #"{"intervals":[{"id":"#)
        let f = fixture()
        #expect(f.historyIntervals().map(\.id) == [10, 11].map(Self.id))
        let first = problem(f)
        #expect(first.contains("device desk (\(Self.peerB)): skipped 1 open.json too large or damaged"))
        for _ in 0..<3 {
            #expect(f.historyIntervals().map(\.id) == [10, 11].map(Self.id))
            #expect(problem(f) == first)
            #expect(f.queue.sync { f.history!.peerProblem } == first.components(separatedBy: "history: ").last)
        }
    }

    @Test("open.json is written in a later turn than the Start or Stop that changed it (not before its reply), at most once a window: changes within it together at its end, and at a clean stop")
    func ownOpenWrittenAfterTheReplyOncePerWindow() throws {
        let f = fixture()
        let path = root + "/" + Self.own + "/" + PeerDevices.openFileName
        func writes() -> Int { f.queue.sync { f.history!.openIntervalsWrites } }
        func names() throws -> [String] {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            return (object["intervals"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        }
        // The reply is made with nothing written: the file comes in a later turn.
        let writtenWithReply = f.queue.sync { () -> Int in
            _ = f.service.answer(VarlinkCall(method: "io.stopwatchd.Start", parameters: ["name": .string("a")], more: false))
            return f.history!.openIntervalsWrites
        }
        #expect(writtenWithReply == 0)
        f.queue.sync {}
        #expect(writes() == 1)
        #expect(try names() == ["a"])
        // Within the window: three changes, nothing written until it ends, then once.
        _ = f.reply("Start", ["name": .string("b")])
        _ = f.reply("Stop", ["name": .string("a")])
        _ = f.reply("Start", ["name": .string("c")])
        f.settle(turns: 20)
        #expect(writes() == 1)
        #expect(try names() == ["a"])
        f.time.advance(by: OpenIntervalsSchedule.window - .milliseconds(1))
        #expect(writes() == 1)
        f.time.advance(by: .milliseconds(1))
        #expect(writes() == 2)
        #expect(Set(try names()) == ["b", "c"])
        // A change within the window of that write; the daemon stops cleanly before it ends.
        _ = f.reply("Stop", ["name": .string("b")])
        f.settle(turns: 20)
        #expect(writes() == 2)
        f.queue.sync { f.stopwatches.openIntervals?.flush() }
        #expect(writes() == 3)
        #expect(try names() == ["c"])
        // Nothing left to write at the window's end.
        f.time.advance(by: OpenIntervalsSchedule.window)
        #expect(writes() == 3)
        // A window after the last write, a change is written in the next turn again.
        _ = f.reply("Stop", ["name": .string("c")])
        f.queue.sync {}
        #expect(writes() == 4)
        #expect(try names().isEmpty)
    }

    @Test("open.json is never larger than other devices read (1 MiB): of more counting intervals than fit, those that began latest, logged once; another device shows them")
    func ownOpenCappedToWhatPeersRead() throws {
        let note = String(repeating: "n", count: IntervalNote.maximumLength)
        let intervals = (0..<2_000).map { number in
            Interval(id: Self.id(UInt64(0x1000 + number)), name: "s\(number)", startMs: Self.now - 10_000_000 + Int64(number), endMs: nil, elapsedMs: 1, note: note)
        }
        let writer = fixture(own: Self.peerB, name: "desk")
        let path = root + "/" + Self.peerB + "/" + PeerDevices.openFileName
        writer.queue.sync { writer.history!.writeOpenIntervals(intervals, writtenMs: Self.now) }
        writer.history!.openIntervalsFile.wait()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size <= PeerDevices.openFileLimit && size > PeerDevices.openFileLimit - 2 * 1_200)
        writer.queue.sync { writer.history!.writeOpenIntervals(Array(intervals.dropFirst()), writtenMs: Self.now) }
        writer.history!.openIntervalsFile.wait()
        #expect(logged.withLock { $0 }.filter { $0.contains("that began latest are written") }.count == 1)
        // Read by another device: no problem, the latest-begun ones, the last of them first
        // cut off none.
        let reader = fixture()
        let open = reader.historyIntervals().filter { $0.endMs == nil }
        #expect(!problem(reader).contains("open.json"))
        #expect(open.count > 800 && open.count < 2_000)
        #expect(open.last?.name == "s1999" && open.first?.name == "s\(2_000 - open.count)")
    }

    // MARK: Garbage

    @Test("A first read of a garbage peer (10,000 empty files, an 8 MB binary month without a newline, a binary month with newlines): this device's intervals are served, the status says what was skipped, and the History budget's accounting never passes its limit")
    func garbagePeerFirstReadStaysInBudget() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h))
        let b = try folder(Self.peerB)
        // open(2): FileManager's createFile writes each through a temporary file (seconds).
        for index in 0..<10_000 {
            let descriptor = open(b + "/empty-\(index)", O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
            #expect(descriptor >= 0)
            close(descriptor)
        }
        // Bytes of every value but the newline, well past every buffer (16 KiB, 64 KiB lines):
        // a 64 KiB block of them, over and over.
        var state: UInt64 = 0x9e37_79b9_7f4a_7c15
        var block = [UInt8](repeating: 0, count: 64 * 1024)
        block.withUnsafeMutableBufferPointer { bytes in
            for index in bytes.indices {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes[index] = UInt8(truncatingIfNeeded: state >> 56)
            }
        }
        func month(_ name: String, blocks: Int, newlines: Bool) throws {
            let path = b + "/" + name
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            let handle = try #require(FileHandle(forWritingAtPath: path))
            let bytes = Data(newlines ? block : block.map { $0 == 0x0a ? 0x0b : $0 })
            for _ in 0..<blocks { handle.write(bytes) }
            if newlines { handle.write(Data("\n".utf8)) }
            handle.closeFile()
        }
        try month(Self.october, blocks: 128, newlines: false)
        try month("2023-09.jsonl", blocks: 16, newlines: true)
        let memory = HistoryMemory(limit: 256 * 1024)
        let f = fixture(memory: memory)
        // The first read.
        #expect(f.historyIntervals().map(\.id) == [Self.id(1)])
        #expect(f.historyIntervals(["name": .string("own")]).map(\.id) == [Self.id(1)])
        let said = problem(f)
        #expect(said.contains("10000 unknown files") && said.contains("1 torn last line") && said.contains("lines that are not intervals"), "\(said)")
        // The reply's grant is at most the limit; the one peer merged adds its read buffer
        // (`DeviceLines`, 16 KiB, taken beside the grant as its month opens), nothing more:
        // not the 8 MB line, not a file of the 10,000.
        #expect(f.queue.sync { memory.peak } <= memory.limit + 16 * 1024)
        #expect(f.queue.sync { memory.peak } > 0)
        #expect(f.queue.sync { memory.used } == 0)
    }

    // MARK: Clocks

    @Test("Another device's correction dated more than an hour ahead: this device's change of that interval is dated after it and counts, but its later corrections are dated by its own clock, and the status says nothing of this device's records")
    func peerRecordFarAheadDoesNotDragMadeMs() throws {
        let m = Self.midOctober, h = Self.hour
        try write(Self.own, Self.october, Self.line(1, "own", m, m + h) + Self.line(2, "own", m + 2 * h, m + 3 * h))
        // B's clock two hours ahead: its amend of interval 1.
        try write(Self.peerB, Self.november, Self.amend(100, made: Self.now + 2 * h, 1, "ahead", m, m + h))
        let f = fixture()
        #expect(f.historyIntervals().first?.name == "ahead")
        _ = f.reply("Amend", ["id": .string(Self.id(1)), "note": .string("here")])
        #expect(f.historyIntervals().first { $0.id == Self.id(1) }?.note == "here")
        // 61 minutes on: a correction of another interval is dated now, not at B's time.
        f.wallClock.advance(by: 61 * 60_000)
        _ = f.reply("Amend", ["id": .string(Self.id(2)), "note": .string("later")])
        let text = try String(contentsOfFile: root + "/" + Self.own + "/" + Self.november, encoding: .utf8)
        let made = text.split(separator: "\n").compactMap { line -> (String, Int64)? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let id = object["id"] as? String, let made = (object["made_ms"] as? NSNumber)?.int64Value
            else { return nil }
            return (id, made)
        }
        #expect(made.map(\.0) == [Self.id(1), Self.id(2)])
        #expect(made.first?.1 == Self.now + 2 * h + 1)
        #expect(made.last?.1 == Self.now + 61 * 60_000)
        #expect(!problem(f).contains("ahead of the clock"))
        #expect(f.historyIntervals().first { $0.id == Self.id(2) }?.note == "later")
    }
}
