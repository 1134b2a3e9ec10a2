import Dispatch
import Glibc
import LinuxSystem
import StopwatchProtocol

/// The history on disk: this device's folder in the history folder (`HistoryLayout`), its
/// `YYYY-MM.jsonl` months holding one line per counting interval that ended, in the month
/// of its end (UTC), in the order they ended, and one per correction (Track, Amend, Delete,
/// Undo) in the month it was made (`HistoryCorrection`, `CorrectionIndex`).
///
/// An append writes one line to the current month's file, kept open, and `fdatasync`s it:
/// O(1) however long the history. An automatic phase change's line is flushed in the turn
/// after it is told, and before any state file is saved (`HistoryFlush.afterTelling`). A write that fails (ENOSPC, EIO) is cut back off, so a
/// partial line never stays in the middle of a file; the interval waits in memory, in
/// order, and is written first once writing works again (at the next append, or on the
/// retry timer). The failure is logged once per episode and reported in `problem`.
///
/// It also keeps what `History` calls learn: the earliest start of each month read whole
/// (so a later call can skip a month that cannot match), and which files are damaged or
/// unreadable (logged once each).
///
/// Not thread-safe: it belongs to the server's queue.
///
/// Its jobs are in files of their own: writing (`HistoryJournal+Writing.swift`), reading
/// for `History` (`+Reading`), upkeep at start and daily (`+Upkeep`), and the guard against
/// another machine writing this device's folder (`+OwnFolder`). This file holds the
/// state they share; its properties are internal only so that those files may use them.
// Unchecked Sendable, so the timers' handlers may hold it: every stored property is used
// only on `queue` (serial), where those handlers and every caller run, but `flushResults`,
// a `Locked` list the writer's work appends to (`handOverFlush`).
final class HistoryJournal: @unchecked Sendable {
    static let directoryName = "history"

    private let openDirectory: () throws(Errno) -> DirectoryDescriptor
    let openDirectoryToRead: (() throws(Errno) -> DirectoryDescriptor)?
    let logger: Logger
    let queue: DispatchQueue
    let wallClock: any WallClock
    let retryInterval: Duration
    /// Months whose end is further back than this many days are deleted; nil keeps all.
    let keepDays: Int?
    let userID: uid_t
    /// Told the history's problem when it changes (nil: none).
    let problemChanged: (String?) -> Void
    /// Flushes a month's file (`fdatasync`): a test makes it fail.
    /// Run on `writer`'s queue for a flush handed over, so it holds no state of its own.
    let syncData: @Sendable (FileDescriptor) throws(Errno) -> Void
    /// Where the lines written `.afterTelling` are flushed (`handOverFlush`), off `queue`;
    /// nil: in a turn of `queue` (`flushWritten`).
    let writer: DurableWriter?
    /// This device's id (32 hex digits) and name: the name goes in `History` replies, the id
    /// orders corrections made at the same instant.
    let deviceID: String
    let deviceName: String

    /// `history/`, opened to write; closed when writing fails, opened again at the next try.
    var directory: DirectoryDescriptor?
    /// The earliest `start_ms` of each month read whole, kept up to date by appends and
    /// forgotten by pruning.
    var earliestStarts: [HistoryMonth: Int64] = [:]
    /// Months found unreadable (by reading or at start), and why: in `problem`, logged once.
    var unreadableFiles: [HistoryMonth: String] = [:]

    // Writing's.
    /// The current month's file, kept open for appending, and its inode.
    var current: (month: HistoryMonth, file: FileDescriptor, inode: UInt64)?
    /// Records (intervals that ended, corrections) not written yet, oldest first.
    var pending: [HistoryRecord] = []
    var writeProblem: String?
    /// The records written with `HistoryFlush.afterTelling` and not flushed yet, oldest
    /// first (`flushWritten`), and whether a turn of the queue is asked for it (`flushSoon`).
    var unflushed: [HistoryRecord] = []
    var isFlushComing = false
    /// Records whose flush failed, and why, until they wait in `pending` again
    /// (`takeBackUnflushed`).
    var flushFailed: [HistoryRecord] = []
    var flushFailure: Errno?
    /// The records of each flush handed to `writer` whose result is not learnt yet, oldest
    /// first (`learnFlushes`).
    var flushesInFlight: [[HistoryRecord]] = []
    /// Their results, appended on the writer's queue in the order they ran: nil, flushed.
    let flushResults = Locked<[Errno?]>([])
    /// How many results still to come belong to flushes already set aside (handed over after
    /// one that failed): dropped unread.
    var flushResultsToDrop = 0
    var retryTimer: (any DispatchSourceTimer)?

    // The guard against another writer with this device id (`OwnFolderRecord`,
    // `+OwnFolder`). Nil: none (a month file replaced while kept open is opened again).
    let ownFolderGuard: OwnFolderGuard?
    /// What this daemon left in its device folder, kept up to date by appends, written at
    /// the moments that cost no append its latency (`+OwnFolder`); nil when not checked.
    var ownRecord: OwnFolderRecord?
    /// Why another writer is taken to write this device's folder (a month file replaced
    /// while this daemon wrote it): nothing is written to the folder until a restart.
    var foreignWriter: String?

    // Corrections'.
    /// What the correction records say; nil until a call needs it (built from the months).
    var corrections: CorrectionIndex?
    /// The place of the next record this daemon appends, after all those read.
    var nextPlace = 0
    /// The `made_ms` of this daemon's latest correction: the next is never earlier, so that
    /// a wall clock set back does not make a later correction lose to an earlier one.
    var latestMadeMs: Int64 = 0
    /// A correction of this device's made further ahead of the wall clock than a new one
    /// follows (`newCorrection`): its `made_ms`, for the status; logged once.
    var correctionAheadMs: Int64?
    /// What is wrong with the history folder itself (months left at its top), set at start.
    var folderProblem: String? {
        didSet { problemChanged(problem) }
    }
    /// Intervals this daemon's Delete calls removed, by the delete's record id: what an Undo
    /// of one replies with when the interval's line is gone (pruned). In memory only.
    var deletedIntervals: [String: Interval] = [:]

    // Reading's.
    /// Files already logged as holding bad lines: logged once each.
    var filesWithBadLines: Set<HistoryMonth> = []
    /// Why `history/` could not be listed for the last `History` call, if it could not.
    var listingProblem: String?
    /// How many months `History` calls read from past their first line, bisected for `since`
    /// (`HistoryStream.startOffset`): what tells a test the bisection happened, which the
    /// answer does not.
    var monthsBisected = 0

    // Other devices'.
    /// The other devices' folders, read only (`PeerDevices`).
    let peers: PeerDevices
    /// `peers.problem` as last told: a change is told to `problemChanged`.
    var peerProblem: String?
    /// `open.json`, written on a queue of its own (`writeOpenIntervals`).
    let openIntervalsFile: OpenIntervalsFile
    /// What `Devices` counted of each device's months (`DeviceSummaries`).
    var deviceSummaries = DeviceSummaries()

    // Upkeep's.
    var pruneTimer: (any DispatchSourceTimer)?

    /// - Parameters:
    ///   - openDirectory: opens `history/` to write (made 0700 and checked as `stopwatches/`
    ///     is, the state directory locked); called again while it fails.
    ///   - openDirectoryToRead: while `openDirectory` fails (a read-only file system, a
    ///     state directory that cannot be locked), opens `history/` only to read what is
    ///     there, for `History`; ENOENT when there is none. Nil: `openDirectory` only.
    ///   - openFolder: opens the history folder itself, to read the other devices' folders in
    ///     it (nil: none are read); `deviceLimit` of them at most (`--history-devices`).
    init(
        openDirectory: @escaping () throws(Errno) -> DirectoryDescriptor,
        openDirectoryToRead: (() throws(Errno) -> DirectoryDescriptor)? = nil,
        logger: Logger,
        queue: DispatchQueue,
        wallClock: any WallClock,
        keepDays: Int? = nil,
        retryInterval: Duration = .seconds(5),
        userID: uid_t = geteuid(),
        deviceID: String = "",
        deviceName: String = "",
        openFolder: (() throws(Errno) -> DirectoryDescriptor)? = nil,
        deviceLimit: Int = 64,
        ownFolderGuard: OwnFolderGuard? = nil,
        syncData: @escaping @Sendable (FileDescriptor) throws(Errno) -> Void = { file throws(Errno) in try file.dataSync() },
        writer: DurableWriter? = nil,
        problemChanged: @escaping (String?) -> Void = { _ in }
    ) {
        self.writer = writer
        self.syncData = syncData
        self.ownFolderGuard = ownFolderGuard
        peers = PeerDevices(ownID: deviceID, limit: deviceLimit, logger: logger, openRoot: openFolder)
        openIntervalsFile = OpenIntervalsFile(logger: logger)
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.openDirectory = openDirectory
        self.openDirectoryToRead = openDirectoryToRead
        self.logger = logger
        self.queue = queue
        self.wallClock = wallClock
        self.keepDays = keepDays
        self.retryInterval = retryInterval
        self.userID = userID
        self.problemChanged = problemChanged
    }

    /// What is wrong with the history now (writing fails, a month cannot be read), or nil.
    var problem: String? {
        var parts: [String] = []
        if let foreignWriter { parts.append(foreignWriter) }
        if let writeProblem { parts.append(writeProblem) }
        if let listingProblem { parts.append(listingProblem) }
        if let folderProblem { parts.append(folderProblem) }
        if let correctionAheadMs {
            parts.append("a correction is dated \(UTCTime.text(correctionAheadMs)), ahead of the clock: new ones are dated now and may lose to it")
        }
        if let damaged = corrections?.damagedLines, damaged > 0 {
            parts.append("\(damaged) damaged correction line\(damaged == 1 ? "" : "s") skipped")
        }
        for month in unreadableFiles.keys.sorted() { parts.append("cannot read \(month): \(unreadableFiles[month]!)") }
        if let peerProblem { parts.append(peerProblem) }
        return parts.isEmpty ? nil : "history: " + parts.joined(separator: "; ")
    }

    /// Intervals that ended but are not written yet, oldest first.
    var unwritten: [Interval] {
        pending.compactMap { if case .interval(let interval) = $0 { interval } else { nil } }
    }

    func directoryDescriptor() throws(Errno) -> DirectoryDescriptor {
        if let directory { return directory }
        let opened = try openDirectory()
        directory = opened
        return opened
    }

    func noteCorrectionAhead(_ madeMs: Int64, now: Int64) {
        guard correctionAheadMs != madeMs else { return }
        correctionAheadMs = madeMs
        logger.warning("the history holds a correction of this device dated \(UTCTime.text(madeMs)), more than an hour ahead of the clock (\(UTCTime.text(now))): new corrections are dated now, and lose to it should they correct the same interval")
        problemChanged(problem)
    }

    func unreadable(_ month: HistoryMonth, _ reason: String) {
        guard unreadableFiles[month] == nil else { return }
        unreadableFiles[month] = reason
        logger.error("cannot read the history's \(month): \(reason)")
        problemChanged(problem)
    }

    /// The months `directory` holds a file of, oldest first.
    func listMonths(in directory: DirectoryDescriptor) throws(Errno) -> [HistoryMonth] {
        try directory.entries().compactMap(HistoryMonth.init(fileName:)).sorted()
    }

    deinit {
        retryTimer?.cancel()
        pruneTimer?.cancel()
        current?.file.close()
        directory?.close()
    }
}
