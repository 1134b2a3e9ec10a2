import Glibc
import LinuxSystem
import Testing
import StopWatchCore
import TestSupport

@testable import StopwatchDaemon

/// The journal file's appends, emptying, reading and cutting, and
/// what it refuses in its place.
@Suite("stopwatch journal file")
struct StopwatchJournalFileTests {
    let folder: TemporaryFolder
    let directory: DirectoryDescriptor

    init() throws {
        folder = try TemporaryFolder(prefix: "journal")
        directory = try DirectoryDescriptor.open(folder.path)
    }

    @Test func appendedLinesAreReadBackThenEmptiedThenAppendedAgain() throws {
        defer { directory.close() }
        let file = StopwatchFileName.journal(of: "work")
        #expect(try StopwatchJournalFile.contents(of: file, in: directory, limit: 1_000) == nil)
        #expect(try StopwatchJournalFile.append(Array("a\n".utf8), to: file, in: directory) == 2)
        #expect(try StopwatchJournalFile.append(Array("bc\n".utf8), to: file, in: directory) == 5)
        #expect(try StopwatchJournalFile.contents(of: file, in: directory, limit: 1_000) == Array("a\nbc\n".utf8))
        try StopwatchJournalFile.cut(file, to: 2, in: directory)
        #expect(try StopwatchJournalFile.contents(of: file, in: directory, limit: 1_000) == Array("a\n".utf8))
        try StopwatchJournalFile.empty(file, in: directory)
        #expect(try StopwatchJournalFile.contents(of: file, in: directory, limit: 1_000) == [])
        #expect(try StopwatchJournalFile.append(Array("d\n".utf8), to: file, in: directory) == 2)
        #expect(throws: Errno(EFBIG)) { try StopwatchJournalFile.contents(of: file, in: directory, limit: 1) }
        try StopwatchJournalFile.empty("absent", in: directory)
    }

    @Test(arguments: ["link", "fifo", "directory"])
    func onlyARegularFileIsAJournal(_ kind: String) throws {
        defer { directory.close() }
        let file = StopwatchFileName.journal(of: "work")
        let path = folder.path + "/" + file
        switch kind {
        case "link": #expect(symlink(folder.path + "/elsewhere", path) == 0)
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        default: #expect(mkdir(path, 0o700) == 0)
        }
        #expect(throws: Errno.self) { try StopwatchJournalFile.append(Array("a\n".utf8), to: file, in: directory) }
        #expect(throws: Errno.self) { try StopwatchJournalFile.contents(of: file, in: directory, limit: 100) }
        #expect(throws: Errno.self) { try StopwatchJournalFile.empty(file, in: directory) }
        #expect(access(folder.path + "/elsewhere", F_OK) != 0, "nothing made through the link")
    }
}

/// The reader replays a stopwatch's journal over its file at
/// start, cuts a torn tail, and moves aside a journal without its file.
@Suite("stopwatch files read with their journals")
struct StopwatchJournalReadingTests {
    let folder: TemporaryFolder
    let directory: DirectoryDescriptor
    let saved = ClockReading(boot: .seconds(1000), wall: .seconds(1_790_000_000), bootID: "boot")
    let logged = Locked<[String]>([])

    init() throws {
        folder = try TemporaryFolder(prefix: "journal-read")
        directory = try DirectoryDescriptor.open(folder.path)
    }

    func record(laps: Int, name: String = "work", journal: String = "0123456789abcdef") throws -> StopwatchRecord {
        try StopwatchRecord.journalFixture(laps: laps, name: name, journal: journal, saved: saved)
    }

    /// "work"'s file: `laps` laps, numbered `sequence` in its journal.
    func writeWork(laps: Int, sequence: Int64) throws {
        var snapshot = try record(laps: laps)
        snapshot.journalSequence = sequence
        try directory.replaceAtomically(StopwatchFileName.of("work"), with: snapshot.serialized, through: ".work.json.tmp")
    }

    func readAll(maximumLaps: Int = 100) throws -> [StopwatchFileReader.Restored] {
        let logged = self.logged
        let reader = StopwatchFileReader(directory: folder.path, maximumLaps: maximumLaps, logger: Logger(minimumLevel: .info, journald: false) { line in
            logged.withLock { $0.append(line) }
        })
        return try reader.readAll(in: directory, removingLeftovers: true, at: saved)
    }

    @Test func theJournalsLinesAreReplayedAndATornTailCut() throws {
        defer { directory.close() }
        try writeWork(laps: 2, sequence: 3)
        let journal = StopwatchFileName.journal(of: "work")
        let good = StopwatchJournal.line(try record(laps: 3), sequence: 4, lapsFrom: 2) + StopwatchJournal.line(try record(laps: 4), sequence: 5, lapsFrom: 3)
        _ = try StopwatchJournalFile.append(good + Array(#"{"format":1,"na"#.utf8), to: journal, in: directory)
        let restored = try readAll()
        #expect(restored.count == 1)
        #expect(restored.first?.snapshot.laps.count == 4)
        #expect(restored.first?.journalSequence == 5)
        #expect(try StopwatchJournalFile.contents(of: journal, in: directory, limit: 1 << 20) == good, "the torn tail cut")
        #expect(logged.withLock { $0 }.contains { $0.contains("torn") })
        #expect(try !directory.entries().contains { $0.contains(".corrupt-") }, "a torn last line only cut: no copy")
    }

    @Test func aJournalThatCannotBeCopiedAsideIsLeftAsItIs() throws {
        defer { directory.close() }
        try writeWork(laps: 2, sequence: 3)
        let journal = StopwatchFileName.journal(of: "work")
        let good = StopwatchJournal.line(try record(laps: 3), sequence: 4, lapsFrom: 2)
        let whole = good + StopwatchJournal.line(try record(laps: 4), sequence: 9, lapsFrom: 3)
        _ = try StopwatchJournalFile.append(whole, to: journal, in: directory)
        // Where the copy's temporary file goes, a directory that is not empty: no copy.
        let blocker = "\(folder.path)/\(journal).corrupt-\(FileSystem.timestamp(wall: saved.wall)).tmp"
        #expect(mkdir(blocker, 0o700) == 0 && mkdir(blocker + "/x", 0o700) == 0)
        let restored = try readAll()
        #expect(restored.first?.snapshot.laps.count == 3, "the good line applied")
        #expect(restored.first?.journal == StopwatchFileReader.JournalState(size: Int64(whole.count), isClean: false), "not appended to")
        #expect(try StopwatchJournalFile.contents(of: journal, in: directory, limit: 1 << 20) == whole, "not cut: no copy kept")
    }

    @Test func aLineOutOfRangeEndsTheReplayThereAndTheJournalIsKeptBeforeItIsCut() throws {
        defer { directory.close() }
        try writeWork(laps: 2, sequence: 3)
        let journal = StopwatchFileName.journal(of: "work")
        let good = StopwatchJournal.line(try record(laps: 3), sequence: 4, lapsFrom: 2)
        var late = try record(laps: 4)
        late.latestLapBoot = .seconds(5000)
        let whole = good + StopwatchJournal.line(late, sequence: 5, lapsFrom: 3) + StopwatchJournal.line(try record(laps: 5), sequence: 6, lapsFrom: 4)
        _ = try StopwatchJournalFile.append(whole, to: journal, in: directory)
        let restored = try readAll()
        // The line before it stands: not the file's record alone.
        #expect(restored.first?.snapshot.laps.count == 3)
        #expect(restored.first?.journalSequence == 4)
        #expect(restored.first?.journal == StopwatchFileReader.JournalState(size: Int64(good.count), isClean: true))
        #expect(try StopwatchJournalFile.contents(of: journal, in: directory, limit: 1 << 20) == good)
        let copies = try directory.entries().filter { $0.hasPrefix(journal + ".corrupt-") }
        #expect(copies.count == 1, "every byte kept beside it")
        #expect(try copies.first.flatMap { try StopwatchJournalFile.contents(of: $0, in: directory, limit: 1 << 20) } == whole)
    }

    @Test func aLoweredMaximumOfLapsKeepsLinesWrittenUnderAHigherOne() throws {
        defer { directory.close() }
        // Written under --max-laps 100; read under --max-laps 3, as a file of 5 laps would be.
        try writeWork(laps: 2, sequence: 3)
        var stopped = try record(laps: 5)
        stopped.state = .pause
        let lines = StopwatchJournal.line(try record(laps: 4), sequence: 4, lapsFrom: 2) + StopwatchJournal.line(stopped, sequence: 5, lapsFrom: 4)
        _ = try StopwatchJournalFile.append(lines, to: StopwatchFileName.journal(of: "work"), in: directory)
        let restored = try readAll(maximumLaps: 3)
        #expect(restored.first?.snapshot.laps.count == 5)
        #expect(restored.first?.journalSequence == 5, "the Stop too: nothing cut")
        #expect(restored.first?.snapshot.state.isCounting == false)
    }

    @Test func aJournalWithoutItsFileIsMovedAside() throws {
        defer { directory.close() }
        let journal = StopwatchFileName.journal(of: "gone")
        _ = try StopwatchJournalFile.append(StopwatchJournal.line(try record(laps: 1, name: "gone"), sequence: 1, lapsFrom: 0), to: journal, in: directory)
        #expect(try readAll().isEmpty)
        #expect(try directory.status(of: journal) == nil)
        #expect(try directory.entries().contains { $0.hasPrefix(journal + ".corrupt-") })
    }
}
