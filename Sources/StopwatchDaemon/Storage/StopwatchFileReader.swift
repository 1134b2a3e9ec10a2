import Glibc
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
import Varlink

/// Reads the stopwatch files at start. A file whose content is bad (not JSON, a wrong
/// format, out of range, not a regular file) costs that stopwatch only: it is moved aside,
/// kept for whoever wants to look, and logged. A file that cannot be read (EACCES, EIO) is
/// not bad content: it stops the start and is left where it is.
struct StopwatchFileReader {
    /// Where the files are, for messages: `stopwatches/` in the state directory.
    let directory: String
    /// The largest file read; anything longer is bad content.
    let maximumFileSize: Int
    /// The most laps a stopwatch's journal may bring it to: as many as a file of
    /// `maximumFileSize` may hold (which loads, whatever `--max-laps` is now), so that a
    /// lowered `--max-laps` never cuts lines written under a higher one, and the snapshot
    /// written of what is replayed loads again.
    let maximumReplayedLaps: Int
    let logger: Logger

    init(directory: String, maximumLaps: Int, logger: Logger) {
        self.directory = directory
        self.maximumFileSize = Self.maximumFileSize(maximumLaps: maximumLaps)
        self.maximumReplayedLaps = max(maximumLaps, (maximumFileSize - Self.bytesOtherThanLaps) / Self.bytesPerLap)
        self.logger = logger
    }

    /// The largest file the writer can produce with `maximumLaps` laps, each up to the widest
    /// Int64 (`-9223372036854775808`, 20 characters, and its comma), plus 24 KiB for the rest
    /// (a 64-scalar name escaped to at most 12 bytes each is 768, a 1,024-scalar note 12,288,
    /// a cycle of 16 phases with 32-scalar labels under 7,100, the other fields under 500).
    /// Never below the 1 MiB every earlier stopwatchd read, so no file that loaded before is
    /// refused now.
    static func maximumFileSize(maximumLaps: Int) -> Int {
        let (laps, overflow) = max(maximumLaps, 0).multipliedReportingOverflow(by: bytesPerLap)
        return overflow ? Int.max : max(1 << 20, bytesOtherThanLaps + laps)
    }

    /// The most a lap takes in a file (`-9223372036854775808,`), and what a file holds besides.
    private static let bytesPerLap = 21
    private static let bytesOtherThanLaps = 24_576

    /// A stopwatch read, and the file of an earlier release it was read from (a long name's,
    /// hashed with FNV-1a: `StopwatchFileName.legacyOf`), which its next save replaces.
    typealias Restored = (
        name: String, snapshot: StopWatchSnapshot, wallOriginIsStale: Bool, legacyFile: String?, intervalID: String?, ignoredIntervalID: String?,
        journalSequence: Int64, journalID: String?, journal: JournalState
    )

    /// What the start found of a stopwatch's journal, for the store's next write.
    struct JournalState: Equatable {
        /// Its size, in bytes.
        var size: Int64
        /// Whether a line appended now would follow the last good one: no journal, or one
        /// whose every byte is a good line (a torn or foreign tail cut).
        var isClean: Bool
        static let none = JournalState(size: 0, isClean: true)
    }

    /// Every stopwatch in `stopwatches`, by name, as it is at `now`. Temporary files, the
    /// leftovers of a crash mid-write, are removed when `removingLeftovers` (only a daemon
    /// that holds the directory's lock may: another may be writing them). A stopwatch in
    /// both its file and an earlier release's (a crash between writing one and removing the
    /// other) is read from its file, and the other is moved aside.
    func readAll(
        in stopwatches: DirectoryDescriptor,
        removingLeftovers: Bool,
        at now: ClockReading
    ) throws(DaemonStartError) -> [Restored] {
        let files: [String]
        do {
            files = try stopwatches.entries()
        } catch {
            throw DaemonStartError("cannot read the state directory \(directory): \(error); fix its permissions so this user can read it")
        }
        var restored: [Restored] = []
        // Only these are opened: 10,000 stopwatches without a journal cost no `openat` each.
        let presentJournals = Set(files.filter(StopwatchFileName.isJournal))
        for file in files.sorted() {
            if StopwatchFileName.isTemporary(file) {
                // A write that never reached its rename: the file it was replacing is intact.
                if removingLeftovers { try? stopwatches.remove(file) }
                continue
            }
            guard StopwatchFileName.isStopwatchFile(file) else { continue }
            switch try read(file, in: stopwatches, journals: presentJournals, cuttingJournals: removingLeftovers, at: now) {
            case .success(let stopwatch): restored.append(stopwatch)
            case .failure(let badContent): moveAside(file, because: badContent.reason, in: stopwatches, at: now)
            }
        }
        // A journal without its stopwatch's file (moved aside, or removed by hand): moved aside
        // too, never replayed over another.
        let journals = Set(
            restored.filter { $0.legacyFile == nil && StopwatchFileName.legacyOf($0.name) == nil }.map { StopwatchFileName.journal(of: $0.name) }
        )
        for file in files where StopwatchFileName.isJournal(file) && !journals.contains(file) && removingLeftovers {
            moveAside(file, because: "a journal without its stopwatch's file", in: stopwatches, at: now)
        }
        let current = Set(restored.filter { $0.legacyFile == nil }.map { StopwatchKey($0.name) })
        return restored.filter { stopwatch in
            guard let legacyFile = stopwatch.legacyFile, current.contains(StopwatchKey(stopwatch.name)) else { return true }
            let file = StopwatchFileName.of(stopwatch.name)
            moveAside(legacyFile, because: "an earlier release's file of '\(stopwatch.name)', which \(file) holds too; \(file) is read", in: stopwatches, at: now)
            return false
        }
    }

    /// The name recorded in `file`, when there is such a file and its content names a
    /// stopwatch; nil otherwise. For a file the daemon is about to replace or remove.
    func recordedName(in file: String, of stopwatches: DirectoryDescriptor) throws(Errno) -> String? {
        let descriptor: FileDescriptor
        do {
            guard let status = try stopwatches.status(of: file), status.kind == .regular else { return nil }
            descriptor = try stopwatches.openFile(file, [.readOnly, .noFollow, .nonBlocking])
        } catch where error == .noEntry || error == .tooManyLinks || error == .noDeviceOrAddress {
            return nil
        }
        defer { descriptor.close() }
        guard try descriptor.status().kind == .regular else { return nil }
        let bytes: [UInt8]
        do {
            bytes = try descriptor.readAll(limit: maximumFileSize)
        } catch where error == .fileTooLarge {
            return nil
        }
        guard case .object(let record)? = try? JSONParser.parse(bytes), case .string(let name)? = record["name"] else { return nil }
        return name
    }

    private struct BadContent: Error {
        let reason: String
    }

    /// The stopwatch in `file`, or why its content is bad; throws when it cannot be read. The
    /// name is the record's, which is the file's only if it is stored under that name: a long
    /// name's file name is cut and hashed (`StopwatchFileName`) and does not say it whole.
    private func read(
        _ file: String,
        in stopwatches: DirectoryDescriptor,
        journals: Set<String>,
        cuttingJournals: Bool,
        at now: ClockReading
    ) throws(DaemonStartError) -> Result<Restored, BadContent> {
        func unreadable(_ error: Errno) -> DaemonStartError {
            DaemonStartError("cannot read the stopwatch file \(directory)/\(file): \(error); it is left as it is: fix its permissions (or move it away) and start again")
        }
        let descriptor: FileDescriptor
        do {
            // Only what is a regular file now is opened (opening a device can do things),
            // and the open itself neither follows a link nor waits for a FIFO's writer.
            guard let status = try stopwatches.status(of: file) else { return .failure(BadContent(reason: "it vanished")) }
            guard status.kind == .regular else { return .failure(BadContent(reason: "it is a \(status.kind), not a regular file")) }
            descriptor = try stopwatches.openFile(file, [.readOnly, .noFollow, .nonBlocking])
        } catch where error == .tooManyLinks || error == .noDeviceOrAddress {
            return .failure(BadContent(reason: "it is not a regular file"))
        } catch {
            throw unreadable(error)
        }
        defer { descriptor.close() }
        let bytes: [UInt8]
        do {
            let status = try descriptor.status()
            guard status.kind == .regular else { return .failure(BadContent(reason: "it is a \(status.kind), not a regular file")) }
            guard status.size <= maximumFileSize else {
                return .failure(BadContent(reason: "it is \(status.size) bytes, more than the \(maximumFileSize) a stopwatch takes"))
            }
            bytes = try descriptor.readAll(limit: maximumFileSize)
        } catch where error == .fileTooLarge {
            return .failure(BadContent(reason: "it is more than the \(maximumFileSize) bytes a stopwatch takes"))
        } catch {
            throw unreadable(error)
        }
        var record: StopwatchRecord
        let isLegacy: Bool
        do {
            record = try StopwatchRecord(json: try JSONParser.parse(bytes))
            // By bytes: the file of "café" in NFD must not load as the NFC one's.
            isLegacy = StopwatchFileName.legacyOf(record.name)?.utf8.elementsEqual(file.utf8) ?? false
            guard isLegacy || StopwatchFileName.of(record.name).utf8.elementsEqual(file.utf8) else {
                throw MalformedMessage("it holds stopwatch '\(record.name)'")
            }
            try record.checkRange(at: now)
        } catch {
            return .failure(BadContent(reason: "\(error)"))
        }
        // An earlier release's file has no journal.
        var journal = JournalState.none
        // Nor does a long name's (cut and hashed): the store writes it whole each time.
        if !isLegacy, StopwatchFileName.legacyOf(record.name) == nil, journals.contains(StopwatchFileName.journal(of: record.name)) {
            (record, journal) = try replayJournal(over: record, in: stopwatches, cutting: cuttingJournals, at: now)
        }
        return .success((
            record.name, record.snapshot(restoredAt: now), record.wallOriginIsStale(at: now), isLegacy ? file : nil, record.intervalID,
            record.ignoredIntervalID, record.journalSequence, record.journalID, journal
        ))
    }

    /// The most bytes of a journal read: far beyond what the store lets one grow to before it
    /// writes the snapshot again; a longer one is not this daemon's.
    static let maximumJournalSize = 16 << 20

    /// `record` with the lines of its journal applied (`StopwatchJournal`). A torn or foreign
    /// tail is logged, and cut when `cutting` (the lock is held); a journal that is not a
    /// regular file, or larger than any the store writes, is moved aside and the file's
    /// record stands. A journal that cannot be read (EACCES, EIO) stops the start, as its
    /// file would.
    private func replayJournal(
        over record: StopwatchRecord, in stopwatches: DirectoryDescriptor, cutting: Bool, at now: ClockReading
    ) throws(DaemonStartError) -> (StopwatchRecord, JournalState) {
        let file = StopwatchFileName.journal(of: record.name)
        let bytes: [UInt8]?
        do {
            bytes = try StopwatchJournalFile.contents(of: file, in: stopwatches, limit: Self.maximumJournalSize)
        } catch where error == Errno(EINVAL) || error == .fileTooLarge || error == .tooManyLinks || error == .noDeviceOrAddress
            || error == Errno(EISDIR)
        {
            if cutting { moveAside(file, because: "it is not a journal stopwatchd writes (\(error))", in: stopwatches, at: now) }
            return (record, JournalState(size: 0, isClean: cutting && (try? stopwatches.status(of: file)) == nil))
        } catch {
            throw DaemonStartError("cannot read the journal \(directory)/\(file): \(error); it is left as it is: fix its permissions (or move it away) and start again")
        }
        guard let bytes, !bytes.isEmpty else { return (record, .none) }
        let replay = StopwatchJournal.replay(bytes, over: record, snapshotSequence: record.journalSequence, maximumLaps: maximumReplayedLaps, at: now)
        guard let problem = replay.problem else { return (replay.record, JournalState(size: Int64(bytes.count), isClean: true)) }
        logger.warning("stopwatch '\(record.name)': its journal \(directory)/\(file) has \(problem)")
        // Lines that are not the next transition (or out of range) are never stopwatchd's last
        // word, but they are kept: the whole journal copied aside before it is cut. A torn
        // last line is what a crash mid-append leaves, and only cut (as the history's is).
        let isKept = replay.isTornTail || !cutting || keepCopy(of: bytes, as: file, in: stopwatches, at: now)
        if cutting, isKept, (try? StopwatchJournalFile.cut(file, to: replay.goodBytes, in: stopwatches)) != nil {
            return (replay.record, JournalState(size: Int64(replay.goodBytes), isClean: true))
        }
        // Left as it is: the next write is a snapshot, numbered above every line.
        return (replay.record, JournalState(size: Int64(bytes.count), isClean: false))
    }

    /// Writes `bytes`, the journal `file`'s, to a new file beside it named as a file moved
    /// aside is (`<file>.corrupt-<time>`), through a temporary file (a leftover if this is
    /// torn). False if it could not be written.
    private func keepCopy(of bytes: [UInt8], as file: String, in stopwatches: DirectoryDescriptor, at now: ClockReading) -> Bool {
        let aside = asideName(for: file, in: stopwatches, at: now)
        do {
            try stopwatches.replaceAtomically(aside, with: bytes, through: "\(aside).tmp")
            logger.warning("kept a copy of the journal \(directory)/\(file) as \(directory)/\(aside) before cutting it")
            return true
        } catch {
            logger.error("could not keep a copy of the journal \(directory)/\(file) (\(error)); left as it is")
            return false
        }
    }

    /// `<file>.corrupt-<time>`, never one already there (an earlier one of the same second).
    private func asideName(for file: String, in stopwatches: DirectoryDescriptor, at now: ClockReading) -> String {
        let stamp = FileSystem.timestamp(wall: now.wall)
        var aside = "\(file).corrupt-\(stamp)"
        var number = 1
        while (try? stopwatches.status(of: aside)) != nil, number < 100 {
            number += 1
            aside = "\(file).corrupt-\(stamp)-\(number)"
        }
        return aside
    }

    /// Renames `file` to `<file>.corrupt-<time>`, out of the way of the stopwatch's next save.
    private func moveAside(_ file: String, because reason: String, in stopwatches: DirectoryDescriptor, at now: ClockReading) {
        let aside = asideName(for: file, in: stopwatches, at: now)
        let what = StopwatchFileName.isJournal(file) ? "stopwatch journal" : "stopwatch file"
        do {
            try stopwatches.rename(file, to: aside)
            logger.error("\(what) \(directory)/\(file) is unreadable (\(reason)); moved it to \(directory)/\(aside) and \(StopwatchFileName.isJournal(file) ? "replayed none of it" : "started without it")")
        } catch {
            logger.error("\(what) \(directory)/\(file) is unreadable (\(reason)) and could not be moved aside (\(error)); ignoring it")
        }
    }
}
