import Dispatch
import Glibc
import LinuxSystem
import StopWatchCore
import Testing
import TestSupport
import Varlink

@testable import StopwatchDaemon

/// The store's journal, start to restart: transitions appended
/// and replayed, a Reset and a size past the limit written as snapshots, and a stopwatch
/// removed and made again never given its predecessor's lines, even when its journal
/// survives the removal.
@Suite("the state store's journal")
struct StateStoreJournalTests {
    let folder: TemporaryFolder
    let queue = DispatchQueue(label: "journal-store")
    let clocks = ClockReading(boot: .seconds(100), wall: .seconds(1_700_000_000), bootID: "boot-a")
    let current = Locked<[String: StopWatchSnapshot]>([:])

    init() throws {
        folder = try TemporaryFolder(prefix: "journal-store")
    }

    /// Every problem the store told (`problemChanged`), nil for one gone.
    let problems = Locked<[String?]>([])

    func store(writer: DurableWriter? = nil) throws -> StateStore {
        let (clocks, current, problems) = (self.clocks, self.current, self.problems)
        let store = StateStore(
            directory: folder.path, maximumLaps: 100_000, logger: Logger(minimumLevel: .error, journald: false) { _ in }, queue: queue,
            currentSnapshot: { name in current.withLock { $0[name] } }, problemChanged: { problem in problems.withLock { $0.append(problem) } },
            retryInterval: .seconds(3600), clocks: { clocks }, writer: writer
        )
        return store
    }

    func counting(laps: Int) -> StopWatchSnapshot {
        .counting(since: clocks.boot, laps: (0..<laps).map { .seconds(Int64($0) + 1) }, now: clocks.boot)
    }

    func save(_ store: StateStore, _ name: String, _ snapshot: StopWatchSnapshot?) {
        current.withLock { $0[name] = snapshot }
        queue.sync { store.save(name, snapshot) }
    }

    func restored() throws -> [String: StopWatchSnapshot] {
        let store = try store()
        let loaded = try queue.sync { () throws -> [(name: String, snapshot: StopWatchSnapshot)] in try store.load() }
        return Dictionary(uniqueKeysWithValues: loaded.map { ($0.name, $0.snapshot) })
    }

    var journalBytes: Int {
        (try? FileSystem.contents(of: folder.path + "/stopwatches/" + StopwatchFileName.journal(of: "tea"), limit: 1 << 24).count) ?? -1
    }

    /// A store loaded, used by `body`, and let go (its lock released) before the return.
    func using(writer: DurableWriter? = nil, _ body: (StateStore) throws -> Void) throws {
        let store = try store(writer: writer)
        _ = try queue.sync { () throws -> [(name: String, snapshot: StopWatchSnapshot)] in try store.load() }
        try body(store)
        queue.sync {}
    }

    @Test func transitionsAppendedAndReplayed() throws {
        try using { store in
            save(store, "tea", counting(laps: 0))
            #expect(journalBytes <= 0, "the first write is a snapshot")
            for laps in 1...5 { save(store, "tea", counting(laps: laps)) }
            #expect(journalBytes > 0, "laps appended")
        }
        #expect(try restored()["tea"]?.laps.count == 5)
    }

    @Test func aResetIsASnapshotAndEmptiesTheJournal() throws {
        try using { store in
            save(store, "tea", counting(laps: 0))
            for laps in 1...3 { save(store, "tea", counting(laps: laps)) }
            save(store, "tea", .stopped)
            #expect(journalBytes == 0)
        }
        #expect(try restored()["tea"] == .stopped)
    }

    @Test func pastTheLimitTheJournalIsWrittenIntoASnapshot() throws {
        var laps = 0
        try using { store in
            save(store, "tea", counting(laps: 0))
            var largest = 0
            while laps < 2_000 {
                laps += 1
                save(store, "tea", counting(laps: laps))
                largest = max(largest, journalBytes)
                if largest > Int(StateStore.journalCompactionSize), journalBytes < largest { break }
            }
            #expect(journalBytes < largest, "emptied past \(StateStore.journalCompactionSize) bytes (largest \(largest), after \(laps) laps)")
        }
        #expect(try restored()["tea"]?.laps.count == laps)
    }

    @Test func aStopwatchMadeAgainNeverGetsItsPredecessorsLines() throws {
        let journal = folder.path + "/stopwatches/" + StopwatchFileName.journal(of: "tea")
        try using { store in
            save(store, "tea", counting(laps: 0))
            for laps in 1...3 { save(store, "tea", counting(laps: laps)) }
            let old = try FileSystem.contents(of: journal, limit: 1 << 20)
            #expect(!old.isEmpty)
            save(store, "tea", nil)
            // Made again, and its old journal back as if its removal and the new one's
            // emptying had both been lost to a crash.
            save(store, "tea", counting(laps: 0))
            let file = try FileDescriptor.open(journal, O_WRONLY | O_TRUNC | O_CREAT, mode: 0o600)
            try file.writeAll(old)
            file.close()
        }
        #expect(try restored()["tea"]?.laps.count == 0)
    }

    /// The laps `name`'s file holds (its snapshot, without the journal's lines).
    func lapsInFile(of name: String) -> Int {
        guard let bytes = try? FileSystem.contents(of: folder.path + "/stopwatches/" + StopwatchFileName.of(name), limit: 1 << 24),
            let json = try? JSONParser.parse(bytes), let record = try? StopwatchRecord(json: json)
        else { return -1 }
        return record.laps.count
    }

    @Test func aFailedAppendIsWrittenAsASnapshotAndNothingIsLost() throws {
        let journal = folder.path + "/stopwatches/" + StopwatchFileName.journal(of: "tea")
        try using { store in
            save(store, "tea", counting(laps: 0))
            for laps in 1...3 { save(store, "tea", counting(laps: laps)) }
            #expect(lapsInFile(of: "tea") == 0, "laps appended")
            // The journal turned into a FIFO: appending to it fails at once (not a regular file).
            #expect(unlink(journal) == 0 && mkfifo(journal, 0o600) == 0)
            save(store, "tea", counting(laps: 4))
            #expect(lapsInFile(of: "tea") == 4, "written whole at once, not left to a retry")
            save(store, "tea", counting(laps: 5))
            #expect(lapsInFile(of: "tea") == 5, "and whole again: nothing appended to that journal")
        }
        #expect(problems.withLock { $0 }.allSatisfy { $0 == nil }, "no problem told: \(problems.withLock { $0 })")
        #expect(try restored()["tea"]?.laps.count == 5)
        #expect(access(journal, F_OK) != 0, "the FIFO moved aside at start")
    }

    @Test func aTransitionWhileABatchIsInFlightIsAppendedOnTheBatchsSnapshot() throws {
        let writer = DurableWriter()
        try using(writer: writer) { store in
            save(store, "tea", counting(laps: 0))
            save(store, "pie", counting(laps: 0))
            for laps in 1...2 { save(store, "tea", counting(laps: laps)) }
            let journalBefore = journalBytes
            current.withLock { $0["tea"] = counting(laps: 3) }
            current.withLock { $0["pie"] = counting(laps: 1) }
            // The writer held until the Lap below is on the queue: the batch is in flight
            // (handed over, its result not learnt) when the Lap comes, whatever the timing.
            let gate = DispatchSemaphore(value: 0)
            writer.hand { gate.wait() }
            // As expiries are: handed to the writer in a batch, written with their flushes
            // shared; a Lap of "tea" meanwhile waits for that batch, then follows it.
            queue.sync { store.saveSoon(["tea", "pie"]) }
            queue.sync {}
            current.withLock { $0["tea"] = counting(laps: 4) }
            queue.sync {
                #expect(!store.isAllSaved, "the batch in flight")
                gate.signal()
                store.save("tea", counting(laps: 4))
            }
            #expect(lapsInFile(of: "tea") == 3, "the batch's snapshot, and the Lap appended on it")
            #expect(lapsInFile(of: "pie") == 1)
            #expect(journalBytes > journalBefore, "the Lap a line")
        }
        let restored = try restored()
        #expect(restored["tea"]?.laps.count == 4)
        #expect(restored["pie"]?.laps.count == 1)
    }

    @Test func aWallClockStepWritesTheFileWholeAndEmptiesTheJournal() throws {
        try using { store in
            save(store, "tea", counting(laps: 0))
            for laps in 1...3 { save(store, "tea", counting(laps: laps)) }
            #expect(journalBytes > 0 && lapsInFile(of: "tea") == 0)
            queue.sync { store.saveWhole("tea", counting(laps: 3)) }
            #expect(lapsInFile(of: "tea") == 3)
            #expect(journalBytes == 0)
            save(store, "tea", counting(laps: 4))
            #expect(journalBytes > 0, "appended to again after it")
        }
        #expect(try restored()["tea"]?.laps.count == 4)
    }

    @Test func aSnapshotsNumberIsNeverOneTheReaderRefuses() {
        #expect(StateStore.snapshotSequence(after: 0) == 1)
        #expect(StateStore.snapshotSequence(after: 41) == 42)
        #expect(StateStore.snapshotSequence(after: StopwatchJournal.sequenceBound - 2) == StopwatchJournal.sequenceBound - 1)
        // From a file at the bound's edge: 1 again (its new journal id keeps older lines out).
        #expect(StateStore.snapshotSequence(after: StopwatchJournal.sequenceBound - 1) == 1)
        #expect(StateStore.snapshotSequence(after: -5) == 1)
    }

    @Test func aFileRemovedByHandIsWrittenAgainAtTheNextTransition() throws {
        let file = folder.path + "/stopwatches/" + StopwatchFileName.of("tea")
        try using { store in
            save(store, "tea", counting(laps: 0))
            for laps in 1...2 { save(store, "tea", counting(laps: laps)) }
            #expect(unlink(file) == 0)
            save(store, "tea", counting(laps: 3))
            #expect(lapsInFile(of: "tea") == 3, "written whole: lines alone would be moved aside at the next start")
        }
        #expect(try restored()["tea"]?.laps.count == 3)
    }
}
