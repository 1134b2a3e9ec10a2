import Foundation
import Glibc
import LinuxSystem
import StopwatchProtocol
@testable import StopwatchDaemon
import TestSupport
import Testing
import Varlink

/// How corrections reach the disk and what they reply: refused when they cannot be written,
/// an undo's reply worked out before its record, `made_ms` never going backwards but never
/// dragged to a far future, pruning forgetting the records it removed, and the small rules
/// of Amend (an empty note, nothing to change) and of id prefixes.
extension HistoryCorrectionTests {
    /// Makes the month's file a directory, so that the next append to it fails (EISDIR).
    func blockWriting(_ f: StopwatchServiceFixture, _ month: String = "2023-11.jsonl") throws -> String {
        // The kept file let go, so that the next append opens the month again.
        f.queue.sync { f.history!.closeCurrent() }
        let path = root + "/" + month
        let moved = root + "/saved-" + month
        try FileManager.default.moveItem(atPath: path, toPath: moved)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return moved
    }

    func unblockWriting(_ moved: String, _ month: String = "2023-11.jsonl") throws {
        let path = root + "/" + month
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: moved, toPath: path)
    }

    @Test("a correction that cannot be written is refused with ProtocolError and changes nothing: not in History, not undoable, not written later; the problem clears at the retry once writing works")
    func correctionRefusedWhenUnwritable() throws {
        let f = fixture()
        let made = try tracked(f, "work", Self.now - 3 * Self.hour, Self.now - 2 * Self.hour)
        let moved = try blockWriting(f)
        let refused = f.call("Amend", ["id": .string(made.id), "note": .string("lost")])
        let refusal = reason(refused)
        #expect(refusal?.hasPrefix("org.varlink.service.ProtocolError") == true || refusal?.contains("ProtocolError") == true, "\(refusal ?? "accepted")")
        #expect(refusal?.contains("nothing was changed") == true, "\(refusal ?? "accepted")")
        #expect(f.queue.sync { f.history!.pending.isEmpty })
        #expect(f.queue.sync { f.history!.problem }?.contains("cannot write") == true)
        try unblockWriting(moved)
        f.queue.sync { f.history!.retry() }
        // Nothing was waiting, yet the retry finds writing works: the problem clears then,
        // not only at the next write.
        #expect(f.queue.sync { f.history!.problem } == nil)
        #expect(f.historyIntervals() == [made])
        // The undo takes back the Track: the refused Amend is no step.
        #expect(f.reply("Undo")?["undone"] == .string("track"))
        // Written again: no longer a problem.
        #expect(f.queue.sync { f.history!.problem } == nil)
        #expect(fixture().historyIntervals().isEmpty)
        #expect(try lines().allSatisfy { !$0.contains("lost") })
    }

    @Test("Undo with a month that cannot be read is refused and undoes nothing; the next Undo takes back the same record")
    func undoReplyBeforeRecord() throws {
        let f = fixture()
        // An interval line (a stop's), amended: the undo's reply needs the original line.
        _ = f.reply("Start", ["name": .string("b")])
        f.time.advance(by: .seconds(60))
        f.wallClock.advance(by: 60_000)
        _ = f.reply("Stop", ["name": .string("b")])
        let b = try #require(f.historyIntervals().first)
        #expect(interval(f.reply("Amend", ["id": .string(b.id), "note": .string("x")]))?.note == "x")
        // A month that fails to open (a directory is skipped; a file of no permission is
        // not, but root reads it): the history folder itself gone makes every read fail.
        let saved = root + "-saved"
        try FileManager.default.moveItem(atPath: root, toPath: saved)
        try "".write(toFile: root, atomically: false, encoding: .utf8)
        f.queue.sync {
            f.history!.closeCurrent()
            f.history!.directory?.close()
            f.history!.directory = nil
        }
        #expect(f.error("Undo") != nil)
        try FileManager.default.removeItem(atPath: root)
        try FileManager.default.moveItem(atPath: saved, toPath: root)
        let undone = f.reply("Undo")
        #expect(undone?["undone"] == .string("amend") && interval(undone)?.note == nil, "\(String(describing: undone))")
        #expect(f.error("Undo") == "io.stopwatchd.NothingToUndo")
    }

    @Test("made_ms never goes back when the clock is set back a little (the later Amend wins), but one far ahead is not followed, except by a change of the interval it sets; Undo goes by file order, the same after a restart")
    func madeMsClamp() throws {
        let f = fixture()
        let made = try tracked(f, "work", Self.now - 3 * Self.hour, Self.now - 2 * Self.hour)
        _ = f.reply("Amend", ["id": .string(made.id), "note": .string("first")])
        f.wallClock.advance(by: -600_000)
        _ = f.reply("Amend", ["id": .string(made.id), "note": .string("second")])
        #expect(f.historyIntervals().first?.note == "second")
        #expect(fixture().historyIntervals().first?.note == "second")
        #expect(f.queue.sync { f.history!.problem } == nil)
        // A record of this device dated in the year 9999 (a clock once set so).
        let month = root + "/9999-12.jsonl"
        let future = #"{"op":"amend","rec":"00000000000000f1","made_ms":253402300799999,"id":"\#(made.id)","name":"work","start_ms":\#(Self.now - 3 * Self.hour),"end_ms":\#(Self.now - 2 * Self.hour),"elapsed_ms":\#(Self.hour),"note":"future"}"#
        try (future + "\n").write(toFile: month, atomically: false, encoding: .utf8)
        let g = fixture()
        let other = try tracked(g, "tea", Self.now - 5 * Self.hour, Self.now - 4 * Self.hour)
        #expect(other.id.count == 16)
        // Dated now, in the month of now: not in 9999-12.
        #expect(try String(contentsOfFile: month, encoding: .utf8) == future + "\n")
        #expect(g.queue.sync { g.history!.problem }?.contains("ahead of the clock") == true)
        #expect(logged.withLock { $0 }.contains { $0.contains("more than an hour ahead") })
        // An Amend of the interval the record far ahead sets is dated after it, so it counts:
        // at once, and after a restart.
        #expect(interval(g.reply("Amend", ["id": .string(made.id), "note": .string("fixed")]))?.note == "fixed")
        #expect(g.historyIntervals().first { $0.id == made.id }?.note == "fixed")
        #expect(fixture().historyIntervals().first { $0.id == made.id }?.note == "fixed")
        // Undo goes by this device's files' order (month, then place) in memory as after a
        // restart: the Amend, then the record far ahead, then the Track of tea (written
        // before them in a month before theirs).
        #expect(interval(g.reply("Undo"))?.note == "future")
        #expect(interval(g.reply("Undo"))?.note == "second")
        let h = fixture()
        #expect(h.historyIntervals().first { $0.id == made.id }?.note == "second")
        let undone = h.reply("Undo")
        #expect(undone?["undone"] == .string("track") && interval(undone)?.id == other.id, "\(String(describing: undone))")
    }

    @Test("pruning forgets the corrections it removed: History shows no form from a deleted month, and Undo cannot take one back")
    func pruneForgetsCorrections() throws {
        // The Track made in 2023-09 (its made_ms), of an interval then.
        let september = ManualWallClock(Self.now - 70 * 24 * Self.hour)
        let old = StopwatchServiceFixture(now: .seconds(100), historyDirectory: root, wallClock: september, historyKeepDays: 30, logged: logged)
        _ = try tracked(old, "work", Self.now - 71 * 24 * Self.hour, Self.now - 71 * 24 * Self.hour + Self.hour)
        #expect(old.historyIntervals().count == 1)
        september.advance(by: 70 * 24 * Self.hour)
        old.queue.sync { old.history!.prune() }
        #expect(!FileManager.default.fileExists(atPath: root + "/2023-09.jsonl"))
        #expect(old.historyIntervals().isEmpty)
        #expect(old.error("Undo") == "io.stopwatchd.NothingToUndo")
    }

    @Test("Undo of a delete whose interval line was pruned replies with the interval as the Delete did")
    func undoOfDeleteAfterPrune() throws {
        let clock = ManualWallClock(Self.now)
        let f = StopwatchServiceFixture(now: .seconds(100), historyDirectory: root, wallClock: clock, historyKeepDays: 30, logged: logged)
        // An interval line in 2023-09, deleted now (the delete in 2023-11).
        let line = Interval(id: "00000000000000d1", name: "old", startMs: Self.now - 70 * 24 * Self.hour, endMs: Self.now - 70 * 24 * Self.hour + Self.hour, elapsedMs: Self.hour)
        var bytes: [UInt8] = []
        HistoryLine.encode(line, into: &bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: root + "/2023-09.jsonl"))
        let deleted = interval(f.reply("Delete", ["id": .string(line.id)]))
        #expect(deleted?.name == "old")
        f.queue.sync { f.history!.prune() }
        #expect(!FileManager.default.fileExists(atPath: root + "/2023-09.jsonl"))
        let undone = f.reply("Undo")
        #expect(undone?["undone"] == .string("delete"))
        #expect(interval(undone)?.name == "old" && interval(undone)?.startMs == line.startMs, "\(String(describing: undone))")
    }

    @Test("Amend with an empty note removes the note; an Amend that changes nothing replies with the interval and writes nothing")
    func amendNoteRemovalAndNoOp() throws {
        let f = fixture()
        let made = try tracked(f, "work", Self.now - 3 * Self.hour, Self.now - 2 * Self.hour, note: "review")
        let written = try lines().count
        #expect(interval(f.reply("Amend", ["id": .string(made.id), "note": .string("review")])) == made)
        #expect(interval(f.reply("Amend", ["id": .string(made.id)])) == made)
        #expect(try lines().count == written)
        let cleared = interval(f.reply("Amend", ["id": .string(made.id), "note": .string("")]))
        #expect(cleared?.note == nil && cleared?.id == made.id)
        #expect(fixture().historyIntervals().map(\.note) == [nil])
        #expect(try lines().count == written + 1)
        // Track still refuses an empty note: there it would mean nothing.
        #expect(reason(track(f, "work", 1, 2, note: ""))?.contains("InvalidParameter") == true)
    }

    @Test("an out-of-range time is named by its value in the refusal")
    func outOfRangeValueNamed() {
        let f = fixture()
        let refusal = reason(f.call("Track", ["name": .string("work"), "start_ms": .int(-1), "end_ms": .int(2)]))
        #expect(refusal?.contains("start_ms -1 is out of range") == true, "\(refusal ?? "accepted")")
    }

    @Test("a Delete retried with its prefix deletes nothing more: a deleted id still makes the prefix ambiguous, named as deleted; the full id says it was deleted")
    func retriedDeleteByPrefixDeletesNoSecondInterval() throws {
        let f = fixture()
        let one = Interval(id: "abcdef0000000001", name: "a", startMs: Self.now - 9 * Self.hour, endMs: Self.now - 8 * Self.hour, elapsedMs: Self.hour)
        let two = Interval(id: "abcdef0000000002", name: "a", startMs: Self.now - 7 * Self.hour, endMs: Self.now - 6 * Self.hour, elapsedMs: Self.hour)
        var bytes: [UInt8] = []
        HistoryLine.encode(one, into: &bytes)
        HistoryLine.encode(two, into: &bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: root + "/2023-11.jsonl"))
        _ = f.reply("Delete", ["id": .string(one.id)])
        let retried = reason(f.call("Delete", ["id": .string("abcdef")]))
        #expect(retried?.contains("InvalidInterval") == true, "\(retried ?? "accepted")")
        #expect(retried?.contains("\(one.id) (deleted)") == true, "\(retried ?? "accepted")")
        #expect(retried?.contains(two.id) == true, "\(retried ?? "accepted")")
        #expect(fixture().historyIntervals().map(\.id) == [two.id])
        let refusal = reason(f.call("Amend", ["id": .string("abcdef0000000001"), "note": .string("n")]))
        #expect(refusal?.contains("was deleted") == true, "\(refusal ?? "accepted")")
    }

    @Test("a prefix naming the counting interval and an ended one is ambiguous, both named; the counting one alone is refused as still counting")
    func countingIntervalPartOfAmbiguity() throws {
        let f = fixture()
        _ = f.reply("Start", ["name": .string("b")])
        let counting = try #require(f.queue.sync { f.registry.intervalID(of: "b") })
        let prefix = String(counting.prefix(6))
        let last = counting.last == "0" ? "1" : "0"
        let ended = Interval(id: String(counting.dropLast()) + last, name: "a", startMs: Self.now - 9 * Self.hour, endMs: Self.now - 8 * Self.hour, elapsedMs: Self.hour)
        var bytes: [UInt8] = []
        HistoryLine.encode(ended, into: &bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: root + "/2023-11.jsonl"))
        let both = reason(f.call("Amend", ["id": .string(prefix), "note": .string("n")]))
        #expect(both?.contains("\(counting) (counting)") == true && both?.contains(ended.id) == true, "\(both ?? "accepted")")
        #expect(both?.contains("still counting") == false, "\(both ?? "accepted")")
        let alone = reason(f.call("Amend", ["id": .string(counting), "note": .string("n")]))
        #expect(alone?.contains("still counting") == true, "\(alone ?? "accepted")")
    }

    @Test("a month whose last line was left torn while running is cut before the next append: the record is not glued to it")
    func tornLineCutAtReopen() throws {
        let f = fixture()
        let made = try tracked(f, "work", Self.now - 3 * Self.hour, Self.now - 2 * Self.hour)
        let month = root + "/2023-11.jsonl"
        let whole = try String(contentsOfFile: month, encoding: .utf8)
        try (whole + #"{"op":"amend","rec":"0"#).write(toFile: month + ".new", atomically: false, encoding: .utf8)
        // Replaced behind the journal's back: the kept file is unlinked, so it opens the month again.
        try FileManager.default.removeItem(atPath: month)
        try FileManager.default.moveItem(atPath: month + ".new", toPath: month)
        _ = f.reply("Amend", ["id": .string(made.id), "note": .string("kept")])
        #expect(fixture().historyIntervals().first?.note == "kept")
        let g = fixture()
        #expect(g.queue.sync { () -> String? in
            _ = try? g.history!.correctionIndex()
            return g.history!.problem
        } == nil)
    }

    @Test("an Amend of only the note keeps an elapsed time that left sleep out; a rename into an overlap is refused; exactly 366 days is accepted")
    func amendKeepsElapsedAndChecks() throws {
        let f = fixture()
        // A stopwatch that skips sleep: an hour awake, fifteen asleep.
        _ = f.reply("SetCountsSleep", ["name": .string("work"), "counts_sleep": .bool(false)])
        _ = f.reply("Start", ["name": .string("work")])
        f.time.advance(by: .seconds(3600))
        f.time.suspend(for: .seconds(54_000))
        f.wallClock.advance(by: 15 * Self.hour + Self.hour)
        _ = f.reply("Stop", ["name": .string("work")])
        let slept = try #require(f.historyIntervals().first)
        #expect(slept.elapsedMs == Self.hour && (slept.endMs ?? 0) - slept.startMs == 16 * Self.hour, "\(slept)")
        let noted = interval(f.reply("Amend", ["id": .string(slept.id), "note": .string("night")]))
        #expect(noted?.elapsedMs == Self.hour && noted?.note == "night")
        // Renamed into the name of an interval it overlaps: refused.
        let other = try tracked(f, "tea", slept.startMs + Self.hour, slept.startMs + 2 * Self.hour)
        let refusal = reason(f.call("Amend", ["id": .string(slept.id), "name": .string("tea")]))
        #expect(refusal?.contains("overlap \(other.id)") == true, "\(refusal ?? "accepted")")
        // 366 days exactly: the longest allowed.
        let end = f.wallClock.nowMilliseconds() - 400 * 24 * Self.hour
        #expect(reason(track(f, "year", end - 366 * 24 * Self.hour, end)) == nil)
    }
}
