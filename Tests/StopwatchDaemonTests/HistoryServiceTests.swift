import Foundation
import Glibc
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
@testable import StopwatchDaemon
import TestSupport
import Testing
import Varlink

/// The history: intervals journaled as they end, and History's answers. Manual clocks, a
/// temporary directory; nothing sleeps.
@Suite("history")
final class HistoryServiceTests {
    let root: String
    let logged = Locked<[String]>([])

    init() throws {
        var template = Array("/tmp/swhist-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    func fixture(batchSize: Int = 10_000, keepDays: Int? = nil, wall: Int64 = 1_700_000_000_000) -> StopwatchServiceFixture {
        StopwatchServiceFixture(
            now: .seconds(100), historyDirectory: root, wallClock: ManualWallClock(wall), historyBatchSize: batchSize,
            historyKeepDays: keepDays, logged: logged
        )
    }

    func lines() throws -> [String] {
        // The months: not `open.json`, the counting intervals for the other devices.
        let names = try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.hasSuffix(".jsonl") }.sorted()
        return try names.flatMap { try String(contentsOfFile: root + "/" + $0, encoding: .utf8).split(separator: "\n").map(String.init) }
    }

    func run(_ f: StopwatchServiceFixture, _ method: String, _ name: String = "tea", advance: Duration = .seconds(10)) {
        _ = f.reply(method, ["name": .string(name)])
        f.time.advance(by: advance)
        f.wallClock.advance(by: advance.milliseconds)
    }

    @Test("a stop, a toggle that stops, a Countdown over a counting one and a Remove of a counting one end an interval; a lap, a target, a pause's start do not")
    func appendedOnEnds() throws {
        let f = fixture()
        run(f, "Start")
        run(f, "Lap")
        _ = f.reply("SetTarget", ["name": .string("tea"), "target_ms": .int(3_600_000)])
        run(f, "Stop")          // 1: 20 s
        run(f, "Toggle")
        run(f, "Toggle")        // 2: 10 s
        run(f, "Start")
        _ = f.reply("Countdown", ["name": .string("tea"), "target_ms": .int(3_600_000)])   // 3: 10 s
        f.time.advance(by: .seconds(5))
        f.wallClock.advance(by: 5000)
        _ = f.reply("Remove", ["name": .string("tea")])                                   // 4: 5 s
        let intervals = f.historyIntervals()
        #expect(intervals.map(\.elapsedMs) == [20_000, 10_000, 10_000, 5_000])
        #expect(intervals.allSatisfy { $0.endMs! - $0.startMs == $0.elapsedMs })
        #expect(try lines().count == 4)
        let first = try #require(try lines().first)
        // A new random id each, then the interval as before.
        #expect(first.hasPrefix(#"{"id":""#) && IntervalID.isValid(String(first.dropFirst(7).prefix(16))))
        #expect(first.dropFirst(7 + 16) == #"","name":"tea","start_ms":1700000000000,"end_ms":1700000020000,"elapsed_ms":20000}"#)
        #expect(Set(intervals.map(\.id)).count == 4)
    }

    @Test("an expiry ends no interval")
    func expiryEndsNothing() {
        let f = fixture()
        _ = f.reply("Countdown", ["name": .string("tea"), "target_ms": .int(1000)])
        f.time.advance(by: .seconds(2))
        f.settle()
        #expect(f.historyIntervals().count == 1)   // the open one
        #expect(f.historyIntervals().first?.endMs == nil)
    }

    @Test("filters: by name, and [since, until) by overlap; a zero-length one where it lies; open ones last")
    func filters() {
        let f = fixture()
        run(f, "Start", "a")                  // a: 0–10 s
        run(f, "Stop", "a", advance: .zero)
        run(f, "Start", "b", advance: .zero)  // b: 10 s, zero length
        run(f, "Stop", "b", advance: .seconds(10))
        run(f, "Start", "a", advance: .seconds(5))  // a: open, 20 s on
        let t0: Int64 = 1_700_000_000_000
        #expect(f.historyIntervals().map(\.name) == ["a", "b", "a"])
        #expect(f.historyIntervals(["name": .string("a")]).count == 2)
        #expect(f.historyIntervals(["until_ms": .int(t0 + 10_000)]).map(\.name) == ["a"])
        #expect(f.historyIntervals(["since_ms": .int(t0 + 10_000), "until_ms": .int(t0 + 10_001)]).map(\.name) == ["b"])
        #expect(f.historyIntervals(["since_ms": .int(t0 + 10_001)]).map(\.name) == ["a"])
        #expect(f.historyIntervals(["since_ms": .int(t0 + 10_001)]).first?.endMs == nil)
        #expect(f.historyReplies(["name": .string("no/good")]).first?.error == "io.stopwatchd.InvalidName")
    }

    @Test("with more: batches of the injected size, continues on all but the last; none: one empty reply; without more, too many is TooManyResults")
    func batches() {
        let f = fixture(batchSize: 2)
        for _ in 0..<5 {
            run(f, "Start")
            run(f, "Stop")
        }
        let replies = f.historyReplies()
        #expect(replies.map(\.continues) == [true, true, false])
        #expect(f.historyIntervals().count == 5)
        let none = f.historyReplies(["name": .string("other")])
        #expect(none.count == 1 && none[0].parameters["intervals"] == JSONValue.array([]))
        let single = f.historyReplies(["name": .string("tea")], more: false)
        #expect(single.first?.error == "io.stopwatchd.TooManyResults")
        #expect(f.historyReplies(["since_ms": .int(1_700_000_070_000)], more: false).first?.continues == false)
    }

    /// Writes `count` intervals of November 2023 as the journal's month file, each starting
    /// a millisecond after the one before.
    func writeMonth(_ count: Int) throws -> [Interval] {
        let intervals = (0..<count).map { index in
            let (start, end) = (1_700_000_000_000 + Int64(index), 1_700_000_001_000 + Int64(index))
            let name = index.isMultiple(of: 2) ? "even" : "odd"
            return Interval(
                id: IntervalIdentity.derived(name: name, startMs: start, endMs: end, elapsedMs: 1_000),
                name: name, startMs: start, endMs: end, elapsedMs: 1_000
            )
        }
        var bytes: [UInt8] = []
        for interval in intervals { HistoryLine.encode(interval, into: &bytes) }
        try Data(bytes).write(to: URL(fileURLWithPath: root + "/2023-11.jsonl"))
        return intervals
    }

    /// A History stream pulled as a connection pulls it: `pull()` takes what is ready, as a
    /// socket that takes everything would; nothing pulled, its socket is stalled.
    final class Puller {
        let stream: any VarlinkReplyStream
        var intervals: [Interval] = []
        var replies: [VarlinkReply] = []
        var isDone = false

        init(_ stream: any VarlinkReplyStream) {
            self.stream = stream
        }

        /// Pulls once; whether a reply came.
        @discardableResult
        func pull() -> Bool {
            guard !isDone, let item = stream.next() else { return false }
            let bytes: [UInt8]
            switch item {
            case .message(let message): bytes = message
            case .last(let message):
                bytes = message
                isDone = true
                // Its last reply written: the connection lets go of it.
                stream.cancel()
            case .end(let error): bytes = VarlinkReply(error).message
            }
            guard let reply = try? VarlinkReply(json: JSONParser.parse(Array(bytes.dropLast()))) else { return true }
            replies.append(reply)
            if case .array(let values)? = reply.parameters["intervals"] {
                intervals += values.compactMap { try? Interval(json: $0) }
            }
            return true
        }
    }

    func startStreams(_ f: StopwatchServiceFixture, _ count: Int, more: Bool = true, name: String? = nil) -> [Puller] {
        let call = VarlinkCall(method: "io.stopwatchd.History", parameters: name.map { ["name": .string($0)] } ?? [:], more: more)
        return (0..<count).compactMap { _ in
            guard case .success(.stream(let stream)) = f.queue.sync(execute: { f.service.answer(call) }) else { return nil }
            f.queue.sync { stream.start {} }
            return Puller(stream)
        }
    }

    @Test("readers whose sockets take one reply and stall hold the budget and a small reply each, not more; read, each gets every interval once, in order, in replies of at most the batch")
    func stalledStreamsWithinTheBudget() throws {
        let expected = try writeMonth(3_000)
        let memory = HistoryMemory(limit: 64 * 1024)
        let f = StopwatchServiceFixture(
            now: .seconds(100), historyDirectory: root, wallClock: ManualWallClock(1_700_000_000_000), historyBatchSize: 1_000,
            historyMemory: memory, logged: logged
        )
        let streams = startStreams(f, 8)
        try #require(streams.count == 8)
        // Each socket takes one reply, then nothing.
        f.settle(turns: 200)
        for stream in streams { #expect(f.queue.sync { stream.pull() }) }
        f.settle(turns: 200)
        let used = f.queue.sync { memory.used }
        // Per stream at most a minimum grant past the limit (and a few hundred bytes: a
        // reply's capacity as the allocator rounds it).
        #expect(used <= memory.limit + 8 * (HistoryMemory.minimumGrant + 512), "\(used) bytes used")
        #expect(f.queue.sync { memory.waitingCount } > 0)
        // Then they read, one after the other.
        for stream in streams {
            f.settle(turns: 100_000) { f.queue.sync { _ = stream.pull(); return stream.isDone } }
            #expect(stream.isDone)
            #expect(stream.intervals == expected)
            #expect(stream.replies.allSatisfy { ($0.parameters["intervals"].flatMap { if case .array(let a) = $0 { a.count } else { nil } } ?? 0) <= 1_000 })
            #expect(stream.replies.dropLast().allSatisfy(\.continues) && stream.replies.last?.continues == false)
        }
        #expect(f.queue.sync { memory.used } == 0)
        #expect(f.queue.sync { memory.accountCount } == 0)
    }

    @Test("calls without more, several at once on a budget smaller than their replies: each gets its one reply whole, none waits for ever")
    func wholeRepliesOnASmallBudget() throws {
        let expected = try writeMonth(2_000)
        let memory = HistoryMemory(limit: 64 * 1024)
        let f = StopwatchServiceFixture(
            now: .seconds(100), historyDirectory: root, wallClock: ManualWallClock(1_700_000_000_000), historyMemory: memory, logged: logged
        )
        let streams = startStreams(f, 4, more: false) + startStreams(f, 2, more: false, name: "odd")
        try #require(streams.count == 6)
        f.settle(turns: 100_000) {
            f.queue.sync {
                for stream in streams { stream.pull() }
                return streams.allSatisfy(\.isDone)
            }
        }
        for stream in streams { #expect(stream.replies.count == 1) }
        #expect(streams.prefix(4).allSatisfy { $0.intervals == expected })
        #expect(streams.suffix(2).allSatisfy { $0.intervals == expected.filter { $0.name == "odd" } })
        #expect(f.queue.sync { memory.used } == 0)
    }

    @Test("a call without more completes while stalled readers with more hold the whole budget, and so does the next one behind it")
    func wholeReplyPastStalledReaders() throws {
        let expected = try writeMonth(3_000)
        let memory = HistoryMemory(limit: 64 * 1024)
        // The batch as shipped (10,000): the replies without more are whole, not TooManyResults.
        let f = StopwatchServiceFixture(
            now: .seconds(100), historyDirectory: root, wallClock: ManualWallClock(1_700_000_000_000), historyMemory: memory, logged: logged
        )
        // Eight readers take one reply each and then nothing: they hold the budget for ever.
        let stalled = startStreams(f, 8)
        try #require(stalled.count == 8)
        f.settle(turns: 200)
        for stream in stalled { f.queue.sync { _ = stream.pull() } }
        f.settle(turns: 200)
        // Two calls without more, whose replies (3,000 intervals) are larger than the budget.
        let whole = startStreams(f, 2, more: false)
        try #require(whole.count == 2)
        let done = f.settle(turns: 20_000) {
            f.queue.sync {
                for stream in whole { stream.pull() }
                return whole.allSatisfy(\.isDone)
            }
        }
        #expect(done, "used \(f.queue.sync { memory.used }) bytes, \(f.queue.sync { memory.waitingCount }) waiting")
        for stream in whole {
            #expect(stream.replies.count == 1)
            let same = stream.intervals == expected
            #expect(same, "\(stream.intervals.count) intervals of \(expected.count)")
        }
        // The stalled readers still complete once they read.
        for stream in stalled {
            f.settle(turns: 100_000) { f.queue.sync { _ = stream.pull(); return stream.isDone } }
            let same = stream.intervals == expected
            #expect(same, "\(stream.intervals.count) intervals of \(expected.count)")
        }
        #expect(f.queue.sync { memory.used } == 0)
    }

    @Test("a torn last line is cut off at start; bad lines are skipped with one log line per file")
    func tornAndBad() throws {
        let good = #"{"name":"tea","start_ms":1000,"end_ms":2000,"elapsed_ms":1000}"#
        let text = good + "\nnot json\n" + #"{"name":"tea","start_ms":5,"end_ms":1,"elapsed_ms":1}"# + "\n" + good + "\n{\"name\":\"te"
        try text.write(toFile: root + "/1970-01.jsonl", atomically: false, encoding: .utf8)
        let f = fixture()
        f.queue.sync { f.history!.start() }
        let content = try String(contentsOfFile: root + "/1970-01.jsonl", encoding: .utf8)
        #expect(content.hasSuffix(good + "\n"))
        #expect(f.historyIntervals().count == 2)
        #expect(f.historyIntervals().count == 2)
        #expect(logged.withLock { $0 }.filter { $0.contains("not intervals") }.count == 1)
        #expect(logged.withLock { $0 }.filter { $0.contains("torn") }.count == 1)
    }

    @Test("lines across the reads' chunks: one cut by a chunk's end is joined; one longer than a line may be is skipped whole, one bad line; a last line without its newline is read")
    func linesAcrossChunks() throws {
        func line(_ start: Int) -> String {
            #"{"name":"tea","start_ms":\#(start),"end_ms":\#(start + 1_000),"elapsed_ms":1000}"# + "\n"
        }
        var text = ""
        var starts: [Int] = []
        // Up to and across the first chunk's end.
        while text.utf8.count <= HistoryStream.bufferSize {
            starts.append(1_000 + starts.count)
            text += line(starts.last!)
        }
        // The first chunk ends inside a line.
        try #require(Array(text.utf8)[HistoryStream.bufferSize - 1] != UInt8(ascii: "\n"))
        text += String(repeating: "x", count: HistoryStream.maximumLineLength * 2) + "\n"
        starts += [5_000, 6_000]
        text += line(5_000) + String(line(6_000).dropLast())
        try text.write(toFile: root + "/1970-01.jsonl", atomically: false, encoding: .utf8)
        let f = fixture()
        #expect(f.historyIntervals().map(\.startMs) == starts.map(Int64.init))
        #expect(logged.withLock { $0 }.filter { $0.contains("holds 1 line that are not intervals") }.count == 1)
    }

    @Test(
        "a whole line longer than a line may be is refused alike by History (one bad line) and by the correction index (an interval, a correction), wherever the reads' chunks cut it: in two chunks (its start carried is short enough) or in three",
        arguments: [0, 40_000]
    )
    func longLineRefusedWhereverCut(after shortBytes: Int) throws {
        let length = HistoryStream.maximumLineLength + 30_000
        /// `head` and `tail` with spaces between (JSON still): `length` bytes.
        func long(_ head: String, _ tail: String) -> String {
            head + String(repeating: " ", count: length - head.utf8.count - tail.utf8.count) + tail
        }
        /// Short lines of `name`, ending a second apart from `end`, up to `shortBytes` bytes.
        func short(_ name: String, from end: Int64) -> [String] {
            var lines: [String] = []
            while lines.reduce(0, { $0 + $1.utf8.count + 1 }) < shortBytes {
                let at = end + Int64(lines.count) * 1_000
                lines.append(#"{"name":"\#(name)","start_ms":\#(at - 500),"end_ms":\#(at),"elapsed_ms":500}"#)
            }
            return lines
        }
        // October: short lines, a long interval line, then the interval a long correction names.
        let october: Int64 = 1_696_118_400_000, november: Int64 = 1_698_796_800_000
        let kept = #"{"id":"00000000000000c1","name":"kept","start_ms":\#(october + 20_000_000),"end_ms":\#(october + 30_000_000),"elapsed_ms":10000000}"#
        let octoberLines = short("oct", from: october + 1_000)
            + [long(#"{"id":"00000000000000c0","name":"long","#, #""start_ms":\#(october + 10_000_000),"end_ms":\#(october + 10_000_001),"elapsed_ms":1}"#), kept]
        // November: short lines, a long delete of `kept`, then an interval.
        let novemberLines = short("nov", from: november + 1_000)
            + [long(#"{"op":"delete","rec":"00000000000000d1","made_ms":\#(november + 20_000_000),"#, #""id":"00000000000000c1"}"#),
               #"{"name":"after","start_ms":\#(november + 30_000_000),"end_ms":\#(november + 30_000_001),"elapsed_ms":1}"#]
        try (octoberLines.joined(separator: "\n") + "\n").write(toFile: root + "/2023-10.jsonl", atomically: false, encoding: .utf8)
        try (novemberLines.joined(separator: "\n") + "\n").write(toFile: root + "/2023-11.jsonl", atomically: false, encoding: .utf8)
        let f = fixture()
        let names = f.historyIntervals().map(\.name)
        #expect(names == octoberLines.dropLast(2).map { _ in "oct" } + ["kept"] + novemberLines.dropLast(2).map { _ in "nov" } + ["after"])
        #expect(logged.withLock { $0 }.filter { $0.contains("holds 1 line that are not intervals") }.count == 2)
    }

    @Test("a month's name on something that is not a regular file (a directory) is logged and skipped: the daemon writes none such, so nothing is left out")
    func unreadableMonth() throws {
        try FileManager.default.createDirectory(atPath: root + "/1970-02.jsonl", withIntermediateDirectories: false)
        let f = fixture()
        run(f, "Start")
        run(f, "Stop")
        #expect(f.historyIntervals().count == 1)
        #expect(f.queue.sync { f.history!.problem }?.contains("1970-02.jsonl") == true)
    }

    @Test(
        "a month that is there but cannot be opened (EWOULDBLOCK: another process's lease) fails History with a ProtocolError naming it, with or without more, never a partial answer; once it opens, History answers in full",
        .enabled(if: FileLease.work, "this file system takes no leases"),
        // The kernel breaks the lease lease-break-time seconds after the first open it refuses:
        // a few History calls must be done by then (45 s by default; 10 s is ample).
        .enabled(if: FileLease.lastsLongEnough(10), "leases are broken after /proc/sys/fs/lease-break-time = \(FileLease.breakTime.map { "\($0) s" } ?? "(unreadable)"), too soon for this test (it needs 10 s)")
    )
    func monthThatCannotBeOpened() throws {
        let september = HistoryMonth(epochMilliseconds: 1_694_000_000_000), october = HistoryMonth(epochMilliseconds: 1_697_500_000_000)
        let sep = #"{"name":"sep","start_ms":1694000000000,"end_ms":1694000060000,"elapsed_ms":60000}"# + "\n"
        try (sep + sep).write(toFile: root + "/" + september.fileName, atomically: false, encoding: .utf8)
        let oct = #"{"name":"oct","start_ms":1697500000000,"end_ms":1697500060000,"elapsed_ms":60000}"# + "\n"
        try oct.write(toFile: root + "/" + october.fileName, atomically: false, encoding: .utf8)
        let f = fixture(batchSize: 1)
        run(f, "Start")
        run(f, "Stop")
        let lease = try FileLease(root + "/" + october.fileName)
        // With more: the correction index, read first, cannot read October: the one reply is
        // the error, not a batch that would say the answer is whole.
        let streamed = f.historyReplies()
        #expect(streamed.map(\.continues) == [false])
        #expect(streamed.last?.error == "io.stopwatchd.ProtocolError")
        // Without more (September passed over by since_ms): the one reply is the error.
        let single = f.historyReplies(["since_ms": .int(1_696_118_400_000)], more: false)
        #expect(single.count == 1 && single.first?.error == "io.stopwatchd.ProtocolError")
        for reply in [streamed.last, single.first] {
            guard case .string(let reason)? = reply?.parameters["reason"] else {
                Issue.record("no reason: \(String(describing: reply))")
                continue
            }
            #expect(reason.contains("2023-10.jsonl") && reason.contains(Errno.wouldBlock.description), "\(reason)")
        }
        #expect(f.queue.sync { f.history!.problem }?.contains("2023-10.jsonl") == true)
        #expect(logged.withLock { $0 }.filter { $0.contains("2023-10.jsonl") }.count == 1)
        lease.release()
        #expect(f.historyIntervals().map(\.name) == ["sep", "sep", "oct", "tea"])
        #expect(f.queue.sync { f.history!.problem } == nil)
    }

    @Test("a history directory that cannot be opened fails History too, not an answer of only what is in memory; once it opens, History answers in full")
    func directoryThatCannotBeOpened() throws {
        // A file where the directory should be: opening it fails (ENOTDIR).
        let path = root + "/history"
        try "".write(toFile: path, atomically: false, encoding: .utf8)
        let f = StopwatchServiceFixture(now: .seconds(100), historyDirectory: path, logged: logged)
        run(f, "Start")
        run(f, "Stop")
        run(f, "Start")
        let replies = f.historyReplies()
        #expect(replies.count == 1 && replies.first?.error == "io.stopwatchd.ProtocolError", "\(replies)")
        guard case .string(let reason)? = replies.first?.parameters["reason"] else {
            Issue.record("no reason: \(replies)")
            return
        }
        #expect(reason.contains("the history's device folder") && reason.contains(Errno.notDirectory.description), "\(reason)")
        #expect(f.queue.sync { f.history!.problem }?.contains("cannot list") == true)
        try FileManager.default.removeItem(atPath: path)
        f.queue.sync { f.history!.retry() }
        #expect(f.historyIntervals().map(\.endMs).map { $0 == nil } == [false, true])
        #expect(f.queue.sync { f.history!.problem } == nil)
    }

    @Test("an append that fails is kept in memory, in order, and written once writing works")
    func failedAppend() throws {
        // A directory where the month's file should be: the append fails.
        try FileManager.default.createDirectory(atPath: root + "/2023-11.jsonl", withIntermediateDirectories: false)
        let f = fixture()
        run(f, "Start")
        run(f, "Stop")
        run(f, "Start")
        run(f, "Stop")
        #expect(f.queue.sync { f.history!.unwritten.count } == 2)
        #expect(f.historyIntervals().count == 2)
        try FileManager.default.removeItem(atPath: root + "/2023-11.jsonl")
        f.queue.sync { f.history!.retry() }
        #expect(f.queue.sync { f.history!.unwritten.count } == 0)
        #expect(try lines().count == 2)
        #expect(f.historyIntervals().map(\.startMs) == f.historyIntervals().map(\.startMs).sorted())
    }

    @Test("--history-days deletes the months that ended more than N days ago")
    func pruning() throws {
        for month in ["2023-09", "2023-10", "2023-11"] {
            try "".write(toFile: root + "/\(month).jsonl", atomically: false, encoding: .utf8)
        }
        // 2023-11-14: October ended 14 days ago, September 44.
        let f = fixture(keepDays: 30)
        f.queue.sync { f.history!.start() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: root).sorted() == ["2023-10.jsonl", "2023-11.jsonl"])
    }

    @Test("months: file names, and the month of an instant in UTC")
    func months() {
        #expect(HistoryMonth(epochMilliseconds: 1_700_000_000_000).fileName == "2023-11.jsonl")
        #expect(HistoryMonth(epochMilliseconds: 0).fileName == "1970-01.jsonl")
        #expect(HistoryMonth(fileName: "2024-02.jsonl")?.endMilliseconds == 1_709_251_200_000)
        #expect(HistoryMonth(fileName: "2024-13.jsonl") == nil)
        #expect(HistoryMonth(fileName: "notes.txt") == nil)
    }

    @Test("a month file deleted while kept open is made again: later intervals are not written into the void")
    func deletedWhileOpen() throws {
        let f = fixture()
        run(f, "Start")
        run(f, "Stop")
        // No open.json write under way (on its own queue) while the folder is emptied.
        f.queue.sync {}
        f.history!.openIntervalsFile.wait()
        for file in try FileManager.default.contentsOfDirectory(atPath: root) {
            try FileManager.default.removeItem(atPath: root + "/" + file)
        }
        run(f, "Start")
        run(f, "Stop")
        #expect(try lines().count == 1)
        #expect(f.historyIntervals().count == 1)
    }

    @Test("a FIFO in the month file's place fails the append at once (kept in memory), never blocks the queue")
    func fifoInPlace() throws {
        let month = HistoryMonth(epochMilliseconds: 1_700_000_000_000).fileName
        #expect(mkfifo(root + "/" + month, 0o600) == 0)
        let f = fixture()
        run(f, "Start")
        let stopped = f.reply("Stop", ["name": .string("tea")])
        #expect(stopped?["stopwatch"] != nil)
        // Not written, but kept and served.
        #expect(f.historyIntervals().count == 1)
    }

    @Test("a plain line (the daemon's own shape, with an id) is copied into a reply as the same bytes its Interval encodes to; any other line is not read as plain")
    func plainLineCopiedAsEncoded() throws {
        let interval = Interval(id: "0123456789abcdef", name: "deep work", startMs: 1_700_000_000_000, endMs: 1_700_000_020_000, elapsedMs: 20_000)
        var line: [UInt8] = []
        HistoryLine.encode(interval, into: &line)
        line.removeLast()
        let plain = try #require(line.withUnsafeBytes { HistoryLine.plain($0) })
        #expect(plain.id == 0x0123_4567_89ab_cdef && plain.start == interval.startMs && plain.end == interval.endMs && plain.elapsed == 20_000)
        #expect(Array(line[plain.name]) == Array("deep work".utf8))
        // Into a reply: the bytes `add` writes for the interval with its device, escapes and all.
        var device = interval
        device.device = #"the "laptop""#
        var deviceEnd = Array(#","device":"#.utf8)
        HistoryLine.appendString(device.device, to: &deviceEnd)
        deviceEnd.append(UInt8(ascii: "}"))
        var copied = HistoryReply(granted: 4096), encoded = HistoryReply(granted: 4096)
        for _ in 0..<2 {
            #expect(line.withUnsafeBytes { copied.add(plainLine: $0, deviceEnd: deviceEnd, batchSize: 10) })
            let added = encoded.add(device, batchSize: 10)
            #expect(added)
        }
        let copiedMessage = copied.message(continues: false), encodedMessage = encoded.message(continues: false)
        #expect(copiedMessage == encodedMessage)
        // Full: refused, nothing added.
        var small = HistoryReply(granted: 100)
        #expect(line.withUnsafeBytes { small.add(plainLine: $0, deviceEnd: deviceEnd, batchSize: 10) })
        #expect(!line.withUnsafeBytes { small.add(plainLine: $0, deviceEnd: deviceEnd, batchSize: 10) })
        #expect(small.count == 1)
        for other in [
            #"{"name":"t","start_ms":1,"end_ms":2,"elapsed_ms":1}"#,  // no id: derived, parsed
            #"{"id":"0123456789abcdef","name":"t","start_ms":1,"end_ms":2,"elapsed_ms":1,"note":"n"}"#,
            #"{"id":"0123456789ABCDEF","name":"t","start_ms":1,"end_ms":2,"elapsed_ms":1}"#,
            #"{"id":"0123456789abcdef","name":"t","start_ms":01,"end_ms":2,"elapsed_ms":1}"#,
            #"{"id":"0123456789abcdef","name":"t","start_ms":3,"end_ms":2,"elapsed_ms":1}"#,
            #"{"id":"0123456789abcdef","name":"a/b","start_ms":1,"end_ms":2,"elapsed_ms":1}"#,
            #"{"id":"0123456789abcdef","name":"a"b","start_ms":1,"end_ms":2,"elapsed_ms":1}"#,
            #"{"id":"0123456789abcdef","name":"a\"b","start_ms":1,"end_ms":2,"elapsed_ms":1}"#,
            #"{"id":"0123456789abcdef","name":" t","start_ms":1,"end_ms":2,"elapsed_ms":1}"#,
            #"{"id":"0123456789abcdef","name":"..","start_ms":1,"end_ms":2,"elapsed_ms":1}"#,
            #"{"id":"0123456789abcdef","name":"","start_ms":1,"end_ms":2,"elapsed_ms":1}"#,
            #"{"id":"0123456789abcdef","name":"café","start_ms":1,"end_ms":2,"elapsed_ms":1}"#,
            #"{"id":"0123456789abcdef","name":"t","start_ms":1,"end_ms":2,"elapsed_ms":1} "#,
            #"{"id":"0123456789abcdef","name":"t","start_ms":1,"end_ms":2,"elapsed_ms":1}}"#,
            #"{"id":"0123456789abcdef","name":"t","start_ms":1,"end_ms":2,"elapsed_ms":9999999999999999}"#,
        ] {
            #expect(Array(other.utf8).withUnsafeBytes { HistoryLine.plain($0) } == nil, "\(other)")
        }
    }

    @Test("a line's start and end read backwards, for the daemon's own shape only")
    func plainStartAndEnd() {
        var line: [UInt8] = []
        HistoryLine.encode(Interval(name: "a \"b\"", startMs: 1_700_000_000_000, endMs: 1_700_000_020_000, elapsedMs: 20_000), into: &line)
        line.removeLast()
        #expect(line.withUnsafeBytes { HistoryLine.plainStartAndEnd($0) }.map { [$0.start, $0.end] } == [1_700_000_000_000, 1_700_000_020_000])
        // With an id, as the daemon writes its lines now: read the same.
        var withID: [UInt8] = []
        HistoryLine.encode(Interval(id: "0123456789abcdef", name: "a \"b\"", startMs: 1_700_000_000_000, endMs: 1_700_000_020_000, elapsedMs: 20_000), into: &withID)
        withID.removeLast()
        #expect(withID.withUnsafeBytes { HistoryLine.plainStartAndEnd($0) }.map { [$0.start, $0.end] } == [1_700_000_000_000, 1_700_000_020_000])
        for other in [
            #"{"name":"t","start_ms":1,"end_ms":2,"elapsed_ms":1} "#, #"{"name":"t","end_ms":2,"start_ms":1,"elapsed_ms":1}"#,
            #"{"name":"t","start_ms":1,"end_ms":-2,"elapsed_ms":1}"#, #"{"name":"t","start_ms":1,"elapsed_ms":1}"#,
            #"{"name":"t","start_ms":1,"end_ms":2,"elapsed_ms":}"#, #""start_ms":1,"end_ms":2,"elapsed_ms":1}"#,
            #"{"name":"t","start_ms":1,"end_ms":12345678901234567890,"elapsed_ms":1}"#, "", "}",
            // Damaged at its head: parsed, so that the damage is counted.
            #"xyz,"start_ms":1,"end_ms":2,"elapsed_ms":1}"#, #"{"nam":"t","start_ms":1,"end_ms":2,"elapsed_ms":1}"#,
        ] {
            #expect(Array(other.utf8).withUnsafeBytes { HistoryLine.plainStartAndEnd($0) } == nil, "\(other)")
        }
    }

    @Test("with since, lines that ended before it are passed over by their times: the same answer, and the month's earliest start still learned")
    func sinceSkipsEndedLines() throws {
        let t0: Int64 = 1_700_000_000_000
        var text = ""
        // Ended long before `since`, one of them started earliest; one damaged in its name only.
        text += #"{"name":"old","start_ms":\#(t0 - 9_000),"end_ms":\#(t0 - 8_000),"elapsed_ms":1000}"# + "\n"
        text += #"{"name":"old","start_ms":\#(t0 - 20_000),"end_ms":\#(t0 - 5_000),"elapsed_ms":15000}"# + "\n"
        text += #"{"name":"bad/name","start_ms":\#(t0 - 3_000),"end_ms":\#(t0 - 2_000),"elapsed_ms":1000}"# + "\n"
        // Started before `since` and ended after it: matches.
        text += #"{"name":"across","start_ms":\#(t0 - 1_000),"end_ms":\#(t0 + 1_000),"elapsed_ms":2000}"# + "\n"
        // Of no length, exactly at `since`: matches; ended exactly at `since` after a start before: does not.
        text += #"{"name":"instant","start_ms":\#(t0),"end_ms":\#(t0),"elapsed_ms":0}"# + "\n"
        text += #"{"name":"until-since","start_ms":\#(t0 - 500),"end_ms":\#(t0),"elapsed_ms":500}"# + "\n"
        // Ended before `since` but after a later one (the wall clock stepped back): still passed over.
        text += #"{"name":"stepped","start_ms":\#(t0 - 700),"end_ms":\#(t0 - 600),"elapsed_ms":100}"# + "\n"
        // Another shape (spaces): read whole, and matched or not as before.
        text += #"{ "name": "spaced", "start_ms": \#(t0 + 2_000), "end_ms": \#(t0 + 3_000), "elapsed_ms": 1000 }"# + "\n"
        text += #"{ "name": "spaced-old", "start_ms": \#(t0 - 4_000), "end_ms": \#(t0 - 3_500), "elapsed_ms": 500 }"# + "\n"
        let month = HistoryMonth(epochMilliseconds: t0)
        try text.write(toFile: root + "/" + month.fileName, atomically: false, encoding: .utf8)
        let f = fixture(wall: t0 + 10_000)
        f.queue.sync { f.history!.start() }
        let since = f.historyIntervals(["since_ms": .int(t0)])
        // In end order (SPEC §3), not file order: "instant" ended before "across".
        #expect(since.map(\.name) == ["instant", "across", "spaced"])
        #expect(f.queue.sync { f.history!.earliestStart(of: month) } == t0 - 20_000)
        // Without since, every line is parsed: the damaged one is skipped and logged.
        #expect(f.historyIntervals().map(\.name) == ["old", "old", "spaced-old", "stepped", "until-since", "instant", "across", "spaced"])
        #expect(logged.withLock { $0 }.filter { $0.contains("not intervals") }.count == 1)
    }

    @Test("names are written as JSONValue writes them, escapes included", arguments: [
        "tea", "café ☕", "タイマー", "a \"b\"", "back\\slash", "tab\there", "line\nbreak", "del\u{7F}", "",
    ])
    func string(name: String) {
        var fast: [UInt8] = [], full: [UInt8] = []
        HistoryLine.appendString(name, to: &fast)
        JSONValue.writeString(name, into: &full)
        #expect(fast == full)
    }
}
