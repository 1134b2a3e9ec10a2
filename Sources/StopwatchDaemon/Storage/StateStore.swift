import Dispatch
import LinuxSystem
import StopWatchCore
import StopwatchProtocol

/// Keeps the stopwatches in a directory, one file each (`<name>.json`, a `StopwatchRecord`),
/// so that a change writes one small file and a damaged file costs one stopwatch.
///
/// Every write is atomic and durable before `save` returns. `saveSoon`'s are handed to a
/// `DurableWriter` (the daemon's), a batch at a time, so that their flushes do not hold the
/// queue that tells the next expiry (a command's own save waits for the batch in flight), or
/// written in later turns of the queue without one. A write that fails does not
/// stop anything: it is logged once per episode, reported in `problem`, and retried (on the
/// next change, and every `retryInterval`) until writing works again.
///
/// The directories, their trust and lock are `StateDirectory`'s; reading the files at start
/// is `StopwatchFileReader`'s; this type decides what is written when, and what a failure
/// means.
///
/// Not thread-safe: it belongs to the server's queue.
// Sendable without checks, so the stop handler can take it along: every stored property is
// read and written only on `queue` (serial), where that handler and every caller run, but
// `handedOverResult`, a `Locked` box the writer's work fills (`handOverDueSoon`).
final class StateStore: @unchecked Sendable {
    /// Where the stopwatch files are: `stopwatches/` in the state directory.
    let directory: String
    private let stateDirectory: StateDirectory
    private let reader: StopwatchFileReader
    private let logger: Logger
    private let clocks: () -> ClockReading
    private let queue: DispatchQueue
    private let retryInterval: Duration
    /// What to write for a name whose last write failed, when trying again.
    private let currentSnapshot: (String) -> StopWatchSnapshot?
    /// The id of a counting stopwatch's counting interval (`StopwatchRegistry`'s table),
    /// written in its file as `interval_id`.
    private let currentIntervalID: (String) -> String?
    /// The interval ids `load` read, until the restore takes them (`takeRestoredIntervalIDs`);
    /// what a save during `load` writes meanwhile.
    private var restoredIntervalIDs: [StopwatchKey: String] = [:]
    /// Told when writing starts failing (why), and when it works again (nil).
    private let problemChanged: (String?) -> Void
    /// Called once every change handed over so far is on disk, `saveSoon`'s included, after
    /// a pass that wrote some: the outbox's record of the expiries told is then not needed.
    var whenAllSaved: () -> Void = {}
    /// Called before a state file is written: flushes the history's lines written but not
    /// flushed yet (`HistoryFlush.afterTelling`), so that no state file on disk is ahead of
    /// the history (a power loss would keep the file, which no longer makes the line again).
    var beforeSaving: () -> Void = {}
    /// Called before a batch of `saveSoon`'s is handed to `writer`: hands it the flush of the
    /// history's lines written but not flushed yet, to be done first.
    var beforeHandingOver: () -> Void = {}
    /// Where `saveSoon`'s files are written, off this queue; nil: in this queue's turns.
    private let writer: DurableWriter?
    /// The names of the batch handed to `writer` whose result is not learnt yet (one at a
    /// time: the next is handed over once it is, `learnHandedOver`).
    private var handedOver: [String]?
    /// The handed-over batch's result, set on the writer's queue.
    private let handedOverResult = Locked<BatchResult?>(nil)
    private enum BatchResult: Sendable {
        case written
        case failed(Errno)
    }

    /// Why writing fails now; nil while it works.
    private(set) var problem: String? {
        didSet { if problem != oldValue { problemChanged(problem) } }
    }
    private var unsaved: Set<StopwatchKey> = []
    /// Long names whose file (`StopwatchFileName.of`) this daemon found holding them at
    /// start, or wrote: the file there is theirs, and is not read again before every save
    /// (`otherStopwatch`; a long name with many laps would parse its whole file at each
    /// lap). A failed save, or a removal, forgets the name: the next save checks again.
    private var ownedLongNameFiles: Set<StopwatchKey> = []
    /// Each stopwatch's journal (`StopwatchJournal`) as this
    /// store knows it, for a stopwatch whose file it read or wrote (not a long name's, which
    /// is written whole each time).
    private var journals: [StopwatchKey: Journal] = [:]
    /// The journals of the batch handed to `writer`, set once it is learnt to be written.
    private var handedOverJournals: [StopwatchKey: Journal] = [:]

    /// What the store knows of one stopwatch's journal.
    struct Journal: Equatable {
        /// The highest sequence number given to a write, durable or perhaps: a snapshot is
        /// given a number above it, so that it outnumbers every line ever appended.
        var sequence: Int64
        /// The laps the last durable write holds (a line holds those from their count on).
        var laps: [Duration]
        /// The journal's size.
        var size: Int64
        /// Whether the next transition may be appended: the last write is known durable, and
        /// the journal ends with a whole line of this stopwatch (else the next write is a
        /// snapshot, and the journal is emptied after it).
        var canAppend: Bool
        /// The id of the journal the last snapshot began (`StopwatchRecord.journalID`).
        var id: String?
    }

    /// Past this size the next write is a snapshot, and the journal is emptied.
    static let journalCompactionSize: Int64 = 64 * 1024

    /// A snapshot's number: above every line given (`sequence`), or 1 again at the bound
    /// (from a file that says 2^62 − 1: its new `journal_id` keeps every older line from
    /// being replayed over it, whatever their numbers). Never one the reader refuses.
    static func snapshotSequence(after sequence: Int64) -> Int64 {
        sequence >= 0 && sequence < StopwatchJournal.sequenceBound - 1 ? sequence + 1 : 1
    }

    /// Whether a change failed to be written and waits for another try: a daemon that exits
    /// now would lose it. (Those waiting for their turn, `saveSoon`, are written at exit.)
    /// Once the last is written, `problemChanged(nil)` says so.
    var hasUnsavedChanges: Bool { !unsaved.isEmpty }
    /// Nothing failed to save and nothing waits to be (`saveSoon`): `whenAllSaved` is not
    /// to be waited for.
    var isAllSaved: Bool { dueSoon.isEmpty && unsaved.isEmpty && handedOver == nil }
    /// Names `saveSoon` is to write, in order, and whether a turn of the queue is asked for.
    private var dueSoon: [String] = []
    private var dueSoonNames: Set<StopwatchKey> = []
    /// The error of the last write that failed, for the log.
    private var lastWriteError: Errno?
    private var retryTimer: (any DispatchSourceTimer)?

    /// - Parameters:
    ///   - stateDirectory: the state directory (`--state-dir`), which holds the lock and
    ///     `stopwatches/`.
    ///   - currentSnapshot: what stopwatch `name` is now (nil: removed), for writing again
    ///     what failed to be written.
    ///   - currentIntervalID: the id of stopwatch `name`'s counting interval, if it counts.
    ///   - problemChanged: told why writing fails, when it starts, and nil when it works again.
    ///   - writer: where `saveSoon`'s files are written; nil: on `queue`.
    init(
        directory stateDirectory: String,
        maximumLaps: Int,
        logger: Logger,
        queue: DispatchQueue,
        currentSnapshot: @escaping (String) -> StopWatchSnapshot?,
        currentIntervalID: @escaping (String) -> String? = { _ in nil },
        problemChanged: @escaping (String?) -> Void,
        retryInterval: Duration = .seconds(5),
        trust: DirectoryTrust = .currentProcess,
        clocks: @escaping () -> ClockReading = ClockReading.now,
        writer: DurableWriter? = nil
    ) {
        self.writer = writer
        self.stateDirectory = StateDirectory(path: stateDirectory, trust: trust)
        self.directory = self.stateDirectory.stopwatchesPath
        self.reader = StopwatchFileReader(directory: directory, maximumLaps: maximumLaps, logger: logger)
        self.logger = logger
        self.queue = queue
        self.retryInterval = retryInterval
        self.clocks = clocks
        self.currentSnapshot = currentSnapshot
        self.currentIntervalID = currentIntervalID
        self.problemChanged = problemChanged
    }

    /// Reads every stopwatch kept. Leftovers of a crash mid-write (temporary files) are
    /// removed, once this daemon holds the directory's lock. A file whose content is bad
    /// (not JSON, a wrong format, out of range, not a regular file) is moved aside and logged.
    ///
    /// Throws — the daemon must not start — for a directory it must not trust, one another
    /// daemon uses, and a file it cannot read (EACCES, EIO: not bad content, so not moved).
    /// A directory that cannot be made or opened is logged, and reported in `problem`.
    func load() throws(DaemonStartError) -> [(name: String, snapshot: StopWatchSnapshot)] {
        let stopwatches: DirectoryDescriptor
        let isLocked: Bool
        do {
            stopwatches = try stateDirectory.openStopwatches()
            isLocked = true
        } catch {
            switch error {
            case .refused(let message): throw DaemonStartError(message)
            case .unavailable(let message, let errno):
                lastWriteError = errno
                failed(message)
                // Not writable now (a read-only file system, say), perhaps not even lockable:
                // still read what is there, so that once writing works a change is written
                // to the stopwatch as it was, never to a new one in its place. Nothing is
                // written before the lock is taken.
                do {
                    guard let readable = try stateDirectory.openStopwatchesToRead() else { return [] }
                    stopwatches = readable
                } catch {
                    if case .refused(let message) = error { throw DaemonStartError(message) }
                    return []
                }
                isLocked = false
            }
        }
        defer { if !isLocked { stopwatches.close() } }
        let restored = try reader.readAll(in: stopwatches, removingLeftovers: isLocked, at: clocks())
        for stopwatch in restored {
            if let id = stopwatch.intervalID, stopwatch.snapshot.state.isCounting { restoredIntervalIDs[StopwatchKey(stopwatch.name)] = id }
            if let bad = stopwatch.ignoredIntervalID {
                logger.warning("stopwatch \(stopwatch.name)'s file holds an interval_id that is not 16 lowercase hex digits (\(bad)): its counting interval gets a new id")
            }
        }
        for stopwatch in restored where stopwatch.legacyFile == nil && StopwatchFileName.legacyOf(stopwatch.name) != nil {
            ownedLongNameFiles.insert(StopwatchKey(stopwatch.name))
        }
        // A rename, or a new journal, that a `kill -9` left in the page cache before its
        // directory was flushed: made durable before any line is appended on it, or a power
        // loss could take back the snapshot those lines follow (its lines then foreign).
        let entriesAreDurable = isLocked && (try? stopwatches.sync()) != nil
        for stopwatch in restored where stopwatch.legacyFile == nil && StopwatchFileName.legacyOf(stopwatch.name) == nil {
            // Appended to only over a numbered snapshot: the first write over one of no number
            // (before journals, or an earlier release's since) is a snapshot.
            journals[StopwatchKey(stopwatch.name)] = Journal(
                sequence: stopwatch.journalSequence, laps: stopwatch.snapshot.laps, size: stopwatch.journal.size,
                canAppend: stopwatch.journal.isClean && entriesAreDurable && stopwatch.journalSequence > 0 && stopwatch.journalID != nil,
                id: stopwatch.journalID
            )
        }
        let restamped = restored.filter(\.wallOriginIsStale)
        if isLocked, !restamped.isEmpty {
            // What `WallClockStepWatch` does for a running daemon, for a step while none ran.
            for stopwatch in restamped { saveWhole(stopwatch.name, stopwatch.snapshot) }
            logger.info("the wall clock was set while stopwatchd was not running: \(restamped.count) counting stopwatch\(restamped.count == 1 ? "" : "es") written again against it")
        }
        let legacy = restored.filter { $0.legacyFile != nil }
        if isLocked, !legacy.isEmpty {
            // Written to their SHA-256 names; `writeOnce` removes the earlier release's file.
            for stopwatch in legacy where !stopwatch.wallOriginIsStale { save(stopwatch.name, stopwatch.snapshot) }
            logger.info("\(legacy.count) stopwatch file\(legacy.count == 1 ? "" : "s") of a long name renamed from an earlier release's FNV-1a name")
        }
        return restored.map { ($0.name, $0.snapshot) }
    }

    /// The interval ids of the counting stopwatches `load` read (`interval_id`), by name,
    /// for the restore to put in the registry; forgotten here then.
    func takeRestoredIntervalIDs() -> [StopwatchKey: String] {
        defer { restoredIntervalIDs = [:] }
        return restoredIntervalIDs
    }

    /// The record `name`'s file holds for `snapshot`, its counting interval's id with it.
    private func record(_ name: String, _ snapshot: StopWatchSnapshot, at now: ClockReading) -> StopwatchRecord {
        var record = StopwatchRecord(name: name, snapshot: snapshot, at: now)
        if snapshot.state.isCounting {
            record.intervalID = currentIntervalID(name) ?? restoredIntervalIDs[StopwatchKey(name)]
        }
        return record
    }

    /// `name`'s file as `replaceAtomically` of several writes it: its name, its bytes, and the
    /// temporary file it is written through. A snapshot: numbered above every line of its
    /// journal (the number taken now, whatever becomes of the batch), and what its journal
    /// is once the batch is written put in `written`.
    private func file(
        _ name: String, _ snapshot: StopWatchSnapshot, at now: ClockReading, journals written: inout [StopwatchKey: Journal]
    ) -> (name: String, bytes: [UInt8], temporaryName: String) {
        var record = record(name, snapshot, at: now)
        if StopwatchFileName.legacyOf(name) == nil {
            let key = StopwatchKey(name)
            let before = numberSnapshot(&record, of: key)
            // Not emptied: its lines, all of the journal before, stay (skipped at a start), and
            // the next is appended after them.
            written[key] = Journal(
                sequence: record.journalSequence, laps: record.laps, size: before.size, canAppend: before.canAppend, id: record.journalID
            )
        }
        return (StopwatchFileName.of(name), record.serialized, StopwatchFileName.temporary(of: name))
    }

    /// Opens `history/` in the state directory to write, once it is open and locked (tried
    /// again, as a save does, while it is not: unwritable at start).
    func openHistoryDirectory() throws(Errno) -> DirectoryDescriptor {
        try stateDirectory.openHistory()
    }

    /// Opens `history/` only to read it, while it cannot be opened to write (the state
    /// directory not locked); ENOENT when there is none.
    func openHistoryDirectoryToRead() throws(Errno) -> DirectoryDescriptor {
        try stateDirectory.openHistoryToRead()
    }

    /// The state directory, for the outbox, once `load` has opened and locked it; nil when
    /// it could not (the outbox then keeps runs in memory).
    func openOutboxDirectory() -> DirectoryDescriptor? {
        try? stateDirectory.openForOutbox()
    }

    /// The state directory itself, for the record of what the history wrote
    /// (`OwnFolderGuard`), once `load` has opened and locked it; nil when it could not.
    func openStateDirectory() -> DirectoryDescriptor? {
        try? stateDirectory.openForOutbox()
    }

    /// Makes `name`'s state durable; nil removes it. Returns once it is on disk, or once the
    /// failure is logged (the change itself stands).
    func save(_ name: String, _ snapshot: StopWatchSnapshot?) {
        dueSoonNames.remove(StopwatchKey(name))
        if write(name, snapshot) {
            if problem != nil { retryUnsaved() }
        } else {
            unsaved.insert(StopwatchKey(name))
        }
    }

    /// Saves `name` as `save` does, but its file written whole, never as a line of its
    /// journal: after a wall-clock step, so that the file itself is written again against
    /// the new clock (as `systemctl status` and the log say), its journal emptied after it.
    func saveWhole(_ name: String, _ snapshot: StopWatchSnapshot?) {
        // The batch in flight first: learnt written, it would set the journal appendable again.
        if handedOver != nil {
            writer?.drain()
            takeHandedOverJournals()
        }
        journals[StopwatchKey(name)]?.canAppend = false
        save(name, snapshot)
    }

    /// Writes `names` as they are then (`currentSnapshot`), later, a few at a time with their
    /// flushes shared: handed to the writer in batches, one in flight (`handOverDueSoon`), or
    /// without one in later turns of the queue, so that a burst of expiries leaves clients
    /// served between the writes. A name saved meanwhile (`save`) is not written again.
    func saveSoon(_ names: [String]) {
        let wasEmpty = dueSoon.isEmpty
        for name in names where dueSoonNames.insert(StopwatchKey(name)).inserted {
            dueSoon.append(name)
        }
        if wasEmpty, !dueSoon.isEmpty { scheduleDueSoon() }
    }

    private func scheduleDueSoon() {
        queue.async { [weak self] in self?.saveDueSoon(atMost: Self.dueSoonAtOnce) }
    }

    private func saveDueSoon(atMost limit: Int = .max) {
        if let writer, limit != .max { return handOverDueSoon(to: writer, atMost: limit) }
        let names = dueSoon.prefix(limit)
        dueSoon.removeFirst(names.count)
        let due = names.filter { dueSoonNames.contains(StopwatchKey($0)) }
        for start in stride(from: 0, to: due.count, by: Self.savedTogether) {
            saveTogether(Array(due[start..<min(start + Self.savedTogether, due.count)]))
        }
        if !dueSoon.isEmpty, limit != .max { scheduleDueSoon() }
        if !names.isEmpty { tellIfAllSaved() }
    }

    /// Files written with one shared flush at most (each holds a descriptor meanwhile).
    private static let savedTogether = 64

    /// Saves `names` as they are now, with their flushes shared (`replaceAtomically` of
    /// several: about one journal commit for all, where one at a time costs two each). A
    /// removed one, or all of them once that fails, is saved alone, as `save` does (which
    /// logs a failure and retries).
    private func saveTogether(_ names: [String]) {
        var alone: [String] = []
        var files: [(name: String, bytes: [UInt8], temporaryName: String)] = []
        var together: [String] = []
        var written: [StopwatchKey: Journal] = [:]
        let now = clocks()
        guard names.count > 1, problem == nil else {
            for name in names { save(name, currentSnapshot(name)) }
            return
        }
        for name in names {
            guard let snapshot = currentSnapshot(name) else {
                alone.append(name)
                continue
            }
            files.append(file(name, snapshot, at: now, journals: &written))
            together.append(name)
        }
        if together.count > 1, problem == nil, let stopwatches = try? stateDirectory.openStopwatches() {
            beforeSaving()
            do {
                try stopwatches.replaceAtomically(files)
                for name in together { dueSoonNames.remove(StopwatchKey(name)) }
                for (key, journal) in written { journals[key] = journal }
            } catch {
                alone += together
            }
        } else {
            alone += together
        }
        for name in alone { save(name, currentSnapshot(name)) }
    }

    /// Hands the first `limit` names of `dueSoon` to `writer`, as they are now, their
    /// flushes shared (`replaceAtomically` of several); the next batch once its result is
    /// learnt. Those it does not take are saved here, as `save` does: a removed one, a long
    /// name whose file is not known to be its (`otherStopwatch`), any while writing fails
    /// (the retries are this queue's), all if the directory cannot be opened.
    private func handOverDueSoon(to writer: DurableWriter, atMost limit: Int) {
        // The one in flight hands the next over once its result is learnt.
        guard handedOver == nil else { return }
        let names = dueSoon.prefix(limit)
        dueSoon.removeFirst(names.count)
        var files: [(name: String, bytes: [UInt8], temporaryName: String)] = []
        var together: [String] = []
        var alone: [String] = []
        var written: [StopwatchKey: Journal] = [:]
        let now = clocks()
        for name in names where dueSoonNames.contains(StopwatchKey(name)) {
            let isKnownFile = StopwatchFileName.legacyOf(name) == nil || ownedLongNameFiles.contains(StopwatchKey(name))
            guard problem == nil, isKnownFile, let snapshot = currentSnapshot(name) else {
                alone.append(name)
                continue
            }
            files.append(file(name, snapshot, at: now, journals: &written))
            together.append(name)
        }
        // A duplicate: the work may outlive this queue's descriptor (`forgetStopwatches`).
        let directory = files.isEmpty ? nil : try? stateDirectory.openStopwatches().duplicate()
        if directory == nil { alone += together }
        // Before the batch is handed over: each would wait for it (`writeOnce`).
        for name in alone { save(name, currentSnapshot(name)) }
        if directory == nil {
            // Saved alone above: their numbers were taken, and `write` takes the next.
            written = [:]
        }
        if let directory {
            for name in together { dueSoonNames.remove(StopwatchKey(name)) }
            // The history's lines these files follow from, flushed first (the writer's order).
            beforeHandingOver()
            handedOver = together
            handedOverJournals = written
            let result = handedOverResult
            // Made here: the job holds no reference to the store, which is this queue's to
            // release (its deinit closes the directories and releases the lock).
            let learn: @Sendable () -> Void = { [weak self] in self?.learnHandedOver() }
            writer.hand { [files, queue] in
                defer { directory.close() }
                do throws(Errno) {
                    try directory.replaceAtomically(files)
                    result.withLock { $0 = .written }
                } catch {
                    result.withLock { $0 = .failed(error) }
                }
                queue.async(execute: learn)
            }
        }
        guard handedOver == nil else { return }
        if !dueSoon.isEmpty { scheduleDueSoon() }
        if !names.isEmpty { tellIfAllSaved() }
    }

    /// The handed-over batch's result, once the writer has set it: a failure saves each of
    /// its stopwatches here as it is now, as `save` does (which makes `stopwatches/` again,
    /// or logs and retries); then the next batch is handed over.
    private func learnHandedOver() {
        takeHandedOverJournals()
        // Failed: their journals keep the numbers given, and append nothing until a snapshot.
        if handedOverResult.withLock({ $0 }) != nil { handedOverJournals = [:] }
        guard let names = handedOver, let result = handedOverResult.withLock({ result in
            defer { result = nil }
            return result
        }) else { return }
        handedOver = nil
        if case .failed = result {
            for name in names { save(name, currentSnapshot(name)) }
        }
        if let writer, !dueSoon.isEmpty { handOverDueSoon(to: writer, atMost: Self.dueSoonAtOnce) }
        tellIfAllSaved()
    }

    /// Names `saveSoon` writes in one turn, or hands to the writer in one batch, at most: a
    /// command waits for the turn, or for the batch in flight (`writeOnce`), so it is short.
    private static let dueSoonAtOnce = 16

    private func tellIfAllSaved() {
        guard dueSoon.isEmpty, unsaved.isEmpty, handedOver == nil else { return }
        whenAllSaved()
    }

    private func write(_ name: String, _ snapshot: StopWatchSnapshot?) -> Bool {
        let key = StopwatchKey(name)
        let isLong = StopwatchFileName.legacyOf(name) != nil
        if isLong, !ownedLongNameFiles.contains(key), let other = otherStopwatch(inFileOf: name) {
            failed("not saving stopwatch '\(name)': its file \(directory)/\(StopwatchFileName.of(name)) holds stopwatch '\(other)', which is left as it is; move that file away")
            return false
        }
        do throws(Errno) {
            do {
                try writeOnce(name, snapshot)
            } catch where error == .noEntry {
                // `stopwatches/` went away (or was never made): make it again and retry.
                stateDirectory.forgetStopwatches()
                // Made again: the others' files may be gone with it, and a journal without its
                // file is not read. Each next write is a snapshot (numbers kept).
                for key in journals.keys { journals[key]?.canAppend = false }
                try writeOnce(name, snapshot)
            }
            if isLong, snapshot != nil { ownedLongNameFiles.insert(key) } else { ownedLongNameFiles.remove(key) }
            return true
        } catch {
            ownedLongNameFiles.remove(key)
            lastWriteError = error
            failed("cannot save stopwatches in \(directory): \(error); they keep running and are saved once it is writable")
            return false
        }
    }

    /// The stopwatch recorded in `name`'s file when that is another one. Only a long name's
    /// file can be: its file name is cut and hashed (`StopwatchFileName`), and does not say
    /// the name whole. Such a file is never replaced or removed for `name`.
    private func otherStopwatch(inFileOf name: String) -> String? {
        guard StopwatchFileName.legacyOf(name) != nil, let stopwatches = try? stateDirectory.openStopwatches(),
            let recorded = try? reader.recordedName(in: StopwatchFileName.of(name), of: stopwatches),
            !recorded.utf8.elementsEqual(name.utf8)
        else { return nil }
        return recorded
    }

    private func writeOnce(_ name: String, _ snapshot: StopWatchSnapshot?) throws(Errno) {
        let stopwatches: DirectoryDescriptor
        do {
            stopwatches = try stateDirectory.openStopwatches()
        } catch {
            switch error {
            case .refused(let message):
                if problem == nil { logger.error(message) }
                throw .notPermitted
            case .unavailable(_, let errno): throw errno
            }
        }
        // After the batch in flight, which may hold an earlier state of this stopwatch; its
        // journals' sequence numbers known before this one is given the next.
        if handedOver != nil {
            writer?.drain()
            takeHandedOverJournals()
        }
        beforeSaving()
        let file = StopwatchFileName.of(name)
        // An earlier release's file of this name, replaced by `file` or removed with it.
        let legacyFile = StopwatchFileName.legacyOf(name).flatMap { legacyFile in
            (try? reader.recordedName(in: legacyFile, of: stopwatches))?.utf8.elementsEqual(name.utf8) == true ? legacyFile : nil
        }
        let key = StopwatchKey(name)
        let isLong = StopwatchFileName.legacyOf(name) != nil
        if let snapshot {
            var record = record(name, snapshot, at: clocks())
            if !isLong, legacyFile == nil {
                do {
                    if try append(record, of: name, in: stopwatches) { return }
                } catch {
                    // Its line may be torn: the snapshot below outnumbers it, and the journal is
                    // emptied after it (or, that failing too, not appended to again).
                    logger.warning("stopwatch '\(name)': could not append to its journal (\(error)); writing its file whole")
                }
            }
            // A snapshot: numbered above every line appended, so that none is replayed over it.
            if !isLong { numberSnapshot(&record, of: key) }
            try stopwatches.replaceAtomically(file, with: record.serialized, through: StopwatchFileName.temporary(of: name))
            if !isLong { emptyJournal(of: name, sequence: record.journalSequence, id: record.journalID, laps: record.laps, in: stopwatches) }
            if let legacyFile {
                // Left if this fails: the next start reads `file` and moves the other aside.
                try? stopwatches.remove(legacyFile)
                try? stopwatches.sync()
            }
        } else {
            // The earlier file first, and its failure the removal's: left alone, the next
            // start would load the stopwatch from it again.
            if let legacyFile { try stopwatches.remove(legacyFile) }
            // Nothing appended to its journal from here, whatever fails below: a stopwatch of
            // this name made again begins with a snapshot (a journal of its own).
            journals[key] = nil
            try stopwatches.remove(file)
            // The file's removal durable before the journal's: the other order, torn by a
            // crash, would leave the file without its journal's last transitions. A journal
            // left alone is moved aside at the next start.
            try stopwatches.sync()
            if (try? stopwatches.remove(StopwatchFileName.journal(of: name))) != nil { try? stopwatches.sync() }
            journals[key] = nil
        }
    }

    /// Gives `record`, about to be written as a snapshot, a number above every line given and
    /// a new journal id (none of the journal before, or of a stopwatch of this name removed
    /// since, is replayed over it), and marks its journal not appendable meanwhile. Returns
    /// what was known of the journal before.
    @discardableResult
    private func numberSnapshot(_ record: inout StopwatchRecord, of key: StopwatchKey) -> Journal {
        let before = journals[key] ?? Journal(sequence: 0, laps: [], size: 0, canAppend: false, id: nil)
        record.journalSequence = Self.snapshotSequence(after: before.sequence)
        record.journalID = IntervalIdentity.random()
        journals[key] = Journal(sequence: record.journalSequence, laps: before.laps, size: before.size, canAppend: false, id: before.id)
        return before
    }

    /// Appends `record` to `name`'s journal as its next line, if it may be: the journal is
    /// known clean and small enough, and `record` keeps the laps the last write held (a
    /// Reset clears them: a snapshot then). False: write a snapshot. A failed append throws,
    /// and leaves the journal not appended to until a snapshot empties it (its line may be
    /// torn): the caller writes that snapshot.
    private func append(_ record: StopwatchRecord, of name: String, in stopwatches: DirectoryDescriptor) throws(Errno) -> Bool {
        let key = StopwatchKey(name)
        guard var journal = journals[key], journal.canAppend, let id = journal.id, journal.size < Self.journalCompactionSize,
            journal.sequence + 1 < StopwatchJournal.sequenceBound, record.laps.count >= journal.laps.count,
            record.laps.starts(with: journal.laps),
            // Its file removed by hand, or something else in its place: written again (lines
            // alone would be moved aside at the next start). One `fstatat`, against the
            // append's flush.
            (try? stopwatches.status(of: StopwatchFileName.of(name)))?.kind == .regular
        else { return false }
        let sequence = journal.sequence + 1
        var record = record
        record.journalID = id
        let line = StopwatchJournal.line(record, sequence: sequence, lapsFrom: journal.laps.count)
        journal.sequence = sequence
        journal.canAppend = false
        journals[key] = journal
        let size = try StopwatchJournalFile.append(line, to: StopwatchFileName.journal(of: name), in: stopwatches)
        journals[key] = Journal(sequence: sequence, laps: record.laps, size: size, canAppend: true, id: id)
        return true
    }

    /// After a snapshot numbered `sequence` holding `laps` was written: its journal emptied,
    /// and appended to again once that worked.
    private func emptyJournal(of name: String, sequence: Int64, id: String?, laps: [Duration], in stopwatches: DirectoryDescriptor) {
        let key = StopwatchKey(name)
        let emptied = (try? StopwatchJournalFile.empty(StopwatchFileName.journal(of: name), in: stopwatches)) != nil
        let size = emptied ? 0 : journals[key]?.size ?? 0
        journals[key] = Journal(sequence: sequence, laps: laps, size: size, canAppend: emptied, id: id)
    }

    /// The journals of a handed-over batch, once it is known written: each stopwatch's
    /// snapshot now holds its number. (Failed, they keep the numbers given, and append
    /// nothing until a snapshot is written again: `canAppend` false.)
    private func takeHandedOverJournals() {
        guard !handedOverJournals.isEmpty else { return }
        let written = handedOverResult.withLock { result -> Bool in
            if case .written? = result { return true }
            return false
        }
        guard written else { return }
        for (key, journal) in handedOverJournals { journals[key] = journal }
        handedOverJournals = [:]
    }

    /// One last try before the daemon exits, for changes still waiting for the directory to
    /// become writable (or for their turn, `saveSoon`); what still cannot be written is named
    /// in the log, since it is lost.
    func saveBeforeExit() {
        // Through the writer, which hands the next batch over as it learns each.
        while handedOver != nil {
            writer?.drain()
            learnHandedOver()
        }
        saveDueSoon()
        guard !unsaved.isEmpty else { return }
        retryUnsaved()
        if !unsaved.isEmpty {
            let reason = lastWriteError.map { "\($0)" } ?? "unknown error"
            logger.error("stopping with unsaved changes to \(unsaved.sorted().map(\.name).joined(separator: ", ")) in \(directory) (\(reason)); they are lost")
        }
    }

    private func retryUnsaved() {
        for key in unsaved.sorted() {
            guard write(key.name, currentSnapshot(key.name)) else { return }
            unsaved.remove(key)
        }
        if let problem {
            logger.notice("the state directory \(directory) is writable again (it failed with: \(problem))")
        }
        problem = nil
        retryTimer?.cancel()
        retryTimer = nil
        tellIfAllSaved()
    }

    /// Logs a failure once per episode, and keeps retrying while it lasts.
    private func failed(_ reason: String) {
        if problem == nil { logger.error(reason) }
        problem = reason
        guard retryTimer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = DispatchTimeInterval.nanoseconds(Int(retryInterval.nanoseconds))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .seconds(1))
        timer.setEventHandler { [weak self] in
            guard let self, !self.unsaved.isEmpty else { return }
            self.retryUnsaved()
        }
        retryTimer = timer
        timer.activate()
    }

    deinit {
        retryTimer?.cancel()
        // `stateDirectory` goes with this store: its deinit closes the directories and
        // releases the lock.
    }
}
