import StopWatchCore
import Testing
import Varlink

@testable import StopwatchDaemon

/// The journal's format and its replay over a snapshot, without
/// files: lines in order applied, older ones skipped, a torn or foreign line cut with what
/// follows.
@Suite("stopwatch journal (format and replay)")
struct StopwatchJournalTests {
    let saved = ClockReading(boot: .seconds(1000), wall: .seconds(1_790_000_000), bootID: "boot")
    /// When the replay happens: a start later in the same boot.
    let now = ClockReading(boot: .seconds(1100), wall: .seconds(1_790_000_100), bootID: "boot")

    /// The stopwatch after `laps` laps, one a second from a start at 900 s, counting.
    func record(laps: Int, name: String = "work", journal: String = "0123456789abcdef") throws -> StopwatchRecord {
        try StopwatchRecord.journalFixture(laps: laps, name: name, journal: journal, saved: saved)
    }

    /// `record` as a replay gives it after line `sequence`.
    func sequenced(_ record: StopwatchRecord, _ sequence: Int64) -> StopwatchRecord {
        var record = record
        record.journalSequence = sequence
        return record
    }

    @Test func linesAppliedInOrderGiveTheRecordWithEveryLap() throws {
        let snapshot = try record(laps: 2)
        let after3 = try record(laps: 3), after5 = try record(laps: 5)
        let journal = StopwatchJournal.line(after3, sequence: 8, lapsFrom: 2) + StopwatchJournal.line(after5, sequence: 9, lapsFrom: 3)
        let replay = StopwatchJournal.replay(journal, over: snapshot, snapshotSequence: 7, maximumLaps: 100, at: now)
        #expect(replay.record == sequenced(after5, 9))
        #expect(replay.sequence == 9)
        #expect(replay.goodBytes == journal.count)
        #expect(replay.problem == nil)
    }

    @Test func theSnapshotKeepsItsSequenceNumber() throws {
        let snapshot = sequenced(try record(laps: 3), 41)
        let reread = try StopwatchRecord(json: JSONParser.parse(snapshot.serialized))
        #expect(reread.journalSequence == 41)
        #expect(try StopwatchRecord(json: JSONParser.parse(try record(laps: 3).serialized)).journalSequence == 0)
        #expect(!String(decoding: try record(laps: 3).serialized, as: UTF8.self).contains("journal_seq"), "absent when 0: files as before")
    }

    @Test func linesOfAnotherJournalAreOlderBeforeAndForeignAfter() throws {
        // The journal before the snapshot (or a removed stopwatch's of this name): skipped.
        let snapshot = try record(laps: 2)
        let old = StopwatchJournal.line(try record(laps: 5, journal: "fedcba9876543210"), sequence: 6, lapsFrom: 2)
        let current = StopwatchJournal.line(try record(laps: 3), sequence: 6, lapsFrom: 2)
        let skipped = StopwatchJournal.replay(old + current, over: snapshot, snapshotSequence: 5, maximumLaps: 100, at: now)
        #expect(skipped.record == sequenced(try record(laps: 3), 6) && skipped.problem == nil)
        // After a line of this journal: foreign, cut with what follows.
        let after = StopwatchJournal.replay(current + old, over: snapshot, snapshotSequence: 5, maximumLaps: 100, at: now)
        #expect(after.sequence == 6 && after.goodBytes == current.count && after.problem != nil)
        // A snapshot of no journal id: nothing replayed over it.
        var bare = snapshot
        bare.journalID = nil
        #expect(StopwatchJournal.replay(current, over: bare, snapshotSequence: 5, maximumLaps: 100, at: now).record == bare)
    }

    @Test func aLoweredMaximumOfLapsKeepsTheLinesOfAStopwatchAboveIt() throws {
        // Restored with 5 laps under --max-laps 3: a line that adds none is its own.
        let snapshot = sequenced(try record(laps: 5), 1)
        var stopped = try record(laps: 5)
        stopped.state = .pause
        let replay = StopwatchJournal.replay(StopwatchJournal.line(stopped, sequence: 2, lapsFrom: 5), over: snapshot, snapshotSequence: 1, maximumLaps: 3, at: now)
        #expect(replay.sequence == 2 && replay.problem == nil)
    }

    @Test func noLineOverASnapshotWithoutANumber() throws {
        // A file from before journals, or rewritten by an earlier release: it may be newer
        // than any line beside it.
        let snapshot = try record(laps: 2)
        let journal = StopwatchJournal.line(try record(laps: 3), sequence: 1, lapsFrom: 2)
        let replay = StopwatchJournal.replay(journal, over: snapshot, snapshotSequence: 0, maximumLaps: 100, at: now)
        #expect(replay.record == snapshot && replay.goodBytes == 0 && replay.problem != nil)
    }

    @Test func numbersNearTheirBoundAreRefusedNotTrapped() throws {
        var near = try record(laps: 1)
        near.journalSequence = StopwatchJournal.sequenceBound
        #expect(throws: MalformedMessage.self) { try StopwatchRecord(json: JSONParser.parse(near.serialized)) }
        near.journalSequence = StopwatchJournal.sequenceBound - 1
        #expect(try StopwatchRecord(json: JSONParser.parse(near.serialized)).journalSequence == StopwatchJournal.sequenceBound - 1)
        for sequence in [Int64.max, Int64.min, 0, -1] {
            let journal = StopwatchJournal.line(try record(laps: 2), sequence: sequence, lapsFrom: 1)
            let replay = StopwatchJournal.replay(journal, over: near, snapshotSequence: StopwatchJournal.sequenceBound - 1, maximumLaps: 100, at: now)
            #expect(replay.goodBytes == 0 && replay.problem != nil, "\(sequence)")
        }
    }

    @Test func aLineHoldsOnlyTheLapsFromItsStart() throws {
        let line = StopwatchJournal.line(try record(laps: 1_000), sequence: 1, lapsFrom: 999)
        #expect(line.count < 600, "one lap, not a thousand: \(line.count) bytes")
    }

    @Test func linesTheSnapshotHoldsAreSkipped() throws {
        let after3 = try record(laps: 3), after4 = try record(laps: 4)
        let journal = StopwatchJournal.line(after3, sequence: 3, lapsFrom: 2) + StopwatchJournal.line(after4, sequence: 4, lapsFrom: 3)
        // A crash after the snapshot of 4 was written, before the journal was emptied.
        let snapshot = sequenced(after4, 4)
        let replay = StopwatchJournal.replay(journal, over: snapshot, snapshotSequence: 4, maximumLaps: 100, at: now)
        #expect(replay.record == snapshot && replay.sequence == 4 && replay.problem == nil)
    }

    @Test func aTornLastLineIsCutAndTheRestStands() throws {
        let snapshot = try record(laps: 1), after2 = try record(laps: 2)
        let whole = StopwatchJournal.line(after2, sequence: 2, lapsFrom: 1)
        let torn = Array(StopwatchJournal.line(try record(laps: 3), sequence: 3, lapsFrom: 2).dropLast(5))
        let replay = StopwatchJournal.replay(whole + torn, over: snapshot, snapshotSequence: 1, maximumLaps: 100, at: now)
        #expect(replay.record == sequenced(after2, 2) && replay.sequence == 2)
        #expect(replay.goodBytes == whole.count)
        #expect(replay.problem?.contains("torn") == true)
    }

    @Test(
        "a line that is not the next transition of this stopwatch is cut with what follows",
        arguments: ["gap", "another", "laps_from", "garbage", "too many laps", "out of order", "in the future"]
    )
    func foreignLinesAreCut(_ kind: String) throws {
        let snapshot = try record(laps: 2)
        let good = StopwatchJournal.line(try record(laps: 3), sequence: 6, lapsFrom: 2)
        let bad: [UInt8] = switch kind {
        case "gap": StopwatchJournal.line(try record(laps: 4), sequence: 8, lapsFrom: 3)
        case "another": StopwatchJournal.line(try record(laps: 4, name: "tea"), sequence: 7, lapsFrom: 3)
        case "laps_from":
            Array(String(decoding: StopwatchJournal.line(try record(laps: 4), sequence: 7, lapsFrom: 3), as: UTF8.self)
                .replacingOccurrences("\"laps_from\":3", "\"laps_from\":9").utf8)
        case "garbage": Array("{\"journal_seq\":7,\n".utf8)
        case "too many laps": StopwatchJournal.line(try record(laps: 4), sequence: 7, lapsFrom: 0)
        case "in the future":
            // A lap after the start's boot clock: out of range, as a file's record would be.
            StopwatchJournal.line(try { var late = try record(laps: 4); late.latestLapBoot = .seconds(1200); return late }(), sequence: 7, lapsFrom: 3)
        default: StopwatchJournal.line(try record(laps: 4), sequence: 5, lapsFrom: 3)
        }
        let after = StopwatchJournal.line(try record(laps: 5), sequence: 8, lapsFrom: 4)
        let replay = StopwatchJournal.replay(good + bad + after, over: snapshot, snapshotSequence: 5, maximumLaps: kind == "too many laps" ? 3 : 100, at: now)
        #expect(replay.sequence == 6, "\(replay)")
        #expect(replay.record == sequenced(try record(laps: 3), 6))
        #expect(replay.goodBytes == good.count)
        #expect(replay.problem != nil)
    }
}

extension String {
    /// `self` with every `target` replaced (no Foundation here).
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        var result = "", rest = Substring(self)
        while let range = rest.range(of: target) {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}

extension StopwatchRecord {
    /// For the journal's tests: a stopwatch counting since 900 s on the boot clock, with
    /// `laps` laps a second apart, recorded at `saved`, on journal `journal`.
    static func journalFixture(laps: Int, name: String, journal: String, saved: ClockReading) throws -> StopwatchRecord {
        var snapshot = try StopWatchSnapshot.stopped.applying(.start, at: .seconds(900))
        for lap in 0..<laps { snapshot = try snapshot.applying(.lap, at: .seconds(901 + Int64(lap))) }
        var record = StopwatchRecord(name: name, snapshot: snapshot, at: saved)
        record.journalID = journal
        return record
    }
}
