import Dispatch
import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// The history on disk: `history/YYYY-MM.jsonl` in the state directory, one line per
/// counting interval that ended, in the month of its end (UTC), in the order they ended.
///
/// An append writes one line to the current month's file, kept open, and `fdatasync`s it:
/// O(1) however long the history. A write that fails (ENOSPC, EIO) is cut back off, so a
/// partial line never stays in the middle of a file; the interval waits in memory, in
/// order, and is written first once writing works again (at the next append, or on the
/// retry timer). The failure is logged once per episode and reported in `problem`.
///
/// It also keeps what `History` calls learn: the earliest start of each month read whole
/// (so a later call can skip a month that cannot match), and which files are damaged or
/// unreadable (logged once each).
///
/// Not thread-safe: it belongs to the server's queue.
// Unchecked Sendable, so the timers' handlers may hold it: every stored property is used
// only on `queue` (serial), where those handlers and every caller run.
final class HistoryJournal: @unchecked Sendable {
    static let directoryName = "history"

    private let openDirectory: () throws(Errno) -> DirectoryDescriptor
    private let openDirectoryToRead: (() throws(Errno) -> DirectoryDescriptor)?
    private let logger: Logger
    private let queue: DispatchQueue
    private let wallClock: any WallClock
    private let retryInterval: Duration
    /// Months whose end is further back than this many days are deleted; nil keeps all.
    private let keepDays: Int?
    private let userID: uid_t
    /// Told the history's problem when it changes (nil: none).
    private let problemChanged: (String?) -> Void

    private var directory: DirectoryDescriptor?
    private var current: (month: HistoryMonth, file: FileDescriptor)?
    /// Intervals that ended but are not written yet, oldest first.
    private(set) var unwritten: [Interval] = []
    /// The earliest `start_ms` of each month read whole, kept up to date by appends.
    private var earliestStarts: [HistoryMonth: Int64] = [:]
    /// Files already logged as holding bad lines, or as unreadable: logged once each.
    private var filesWithBadLines: Set<HistoryMonth> = []
    private var unreadableFiles: [HistoryMonth: String] = [:]
    /// Why `history/` could not be listed for the last `History` call, if it could not.
    private var listingProblem: String?
    private var writeProblem: String?
    private var retryTimer: (any DispatchSourceTimer)?
    private var pruneTimer: (any DispatchSourceTimer)?

    /// - Parameters:
    ///   - openDirectory: opens `history/` to write (made 0700 and checked as `stopwatches/`
    ///     is, the state directory locked); called again while it fails.
    ///   - openDirectoryToRead: while `openDirectory` fails (a read-only file system, a
    ///     state directory that cannot be locked), opens `history/` only to read what is
    ///     there, for `History`; ENOENT when there is none. Nil: `openDirectory` only.
    init(
        openDirectory: @escaping () throws(Errno) -> DirectoryDescriptor,
        openDirectoryToRead: (() throws(Errno) -> DirectoryDescriptor)? = nil,
        logger: Logger,
        queue: DispatchQueue,
        wallClock: any WallClock,
        keepDays: Int? = nil,
        retryInterval: Duration = .seconds(5),
        userID: uid_t = geteuid(),
        problemChanged: @escaping (String?) -> Void = { _ in }
    ) {
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
        if let writeProblem { parts.append(writeProblem) }
        if let listingProblem { parts.append(listingProblem) }
        for month in unreadableFiles.keys.sorted() { parts.append("cannot read \(month): \(unreadableFiles[month]!)") }
        return parts.isEmpty ? nil : "history: " + parts.joined(separator: "; ")
    }

    /// At start: cuts off each month's torn last line (a crash mid-append), deletes the
    /// months `--history-days` no longer keeps, and prunes again once a day.
    func start() {
        if let directory = try? directoryDescriptor() {
            for month in months(in: directory) { cutTornLine(month, in: directory) }
        }
        prune()
        guard keepDays != nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .seconds(86_400), repeating: .seconds(86_400), leeway: .seconds(60))
        timer.setEventHandler { [weak self] in self?.prune() }
        pruneTimer = timer
        timer.activate()
    }

    /// Records an interval that ended: on disk when this returns, or waiting in memory,
    /// in order, if writing fails.
    func append(_ interval: Interval) {
        unwritten.append(interval)
        writeUnwritten()
    }

    private func writeUnwritten() {
        var written = 0
        defer { unwritten.removeFirst(written) }
        for interval in unwritten {
            do throws(Errno) {
                try write(interval)
                written += 1
            } catch {
                failed("cannot write to \(Self.directoryName)/ in the state directory: \(error); \(unwritten.count - written) interval\(unwritten.count - written == 1 ? "" : "s") kept in memory until it works")
                return
            }
        }
        if let writeProblem {
            logger.notice("the history is written again (it failed with: \(writeProblem))")
            self.writeProblem = nil
            retryTimer?.cancel()
            retryTimer = nil
            problemChanged(problem)
        }
    }

    private func write(_ interval: Interval) throws(Errno) {
        let month = HistoryMonth(epochMilliseconds: interval.endMs ?? 0)
        var file = try file(for: month)
        var status = try file.status()
        if status.linkCount == 0 {
            // Deleted or moved away while kept open (by hand, by a backup tool): lines
            // written there would be lost with it. The month's file is made again.
            closeCurrent()
            file = try self.file(for: month)
            status = try file.status()
        }
        guard status.kind == .regular, status.ownerID == userID else {
            closeCurrent()
            throw Errno(EPERM)
        }
        var line: [UInt8] = []
        line.reserveCapacity(128)
        HistoryLine.encode(interval, into: &line)
        do {
            try file.writeAll(line)
            try file.dataSync()
        } catch {
            // Never a partial line in the middle of the file: the next append would follow it.
            try? file.truncate(to: status.size)
            throw error
        }
        if let earliest = earliestStarts[month] { earliestStarts[month] = min(earliest, interval.startMs) }
    }

    /// The month's file, open for appending: the one kept if it is that month's.
    private func file(for month: HistoryMonth) throws(Errno) -> FileDescriptor {
        if let current, current.month == month { return current.file }
        closeCurrent()
        let directory = try directoryDescriptor()
        // Non-blocking: a FIFO planted in the file's place must fail the open (ENXIO), not
        // hold the serving queue until someone reads it. (No effect on a regular file.)
        let flags: OpenFlags = [.writeOnly, .create, .noFollow, .nonBlocking, OpenFlags(rawValue: O_APPEND)]
        var opened: FileDescriptor?
        do throws(Errno) {
            let created = try directory.openFile(month.fileName, flags.union(.exclusive), mode: 0o600)
            opened = created
            // A new entry in the directory: durable too, or a crash could lose the file and
            // the line in it.
            do throws(Errno) {
                try directory.sync()
            } catch {
                created.close()
                throw error
            }
        } catch where error == .exists {
            // There already: appended to.
        }
        let file: FileDescriptor
        if let opened {
            file = opened
        } else {
            file = try directory.openFile(month.fileName, flags, mode: 0o600)
        }
        current = (month, file)
        return file
    }

    private func closeCurrent() {
        current?.file.close()
        current = nil
    }

    private func directoryDescriptor() throws(Errno) -> DirectoryDescriptor {
        if let directory { return directory }
        let opened = try openDirectory()
        directory = opened
        return opened
    }

    /// Logs a failure once per episode, and retries while it lasts.
    private func failed(_ reason: String) {
        if writeProblem == nil { logger.error(reason) }
        let changed = writeProblem == nil
        writeProblem = reason
        if changed { problemChanged(problem) }
        // The directory may have been replaced or removed: opened again at the next try.
        closeCurrent()
        directory?.close()
        directory = nil
        guard retryTimer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = DispatchTimeInterval.nanoseconds(Int(retryInterval.nanoseconds))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .seconds(1))
        timer.setEventHandler { [weak self] in self?.retry() }
        retryTimer = timer
        timer.activate()
    }

    /// One last try before the daemon exits, for intervals still waiting for writing to
    /// work; what still cannot be written is named in the log, since it is lost.
    func writeBeforeExit() {
        retry()
        guard !unwritten.isEmpty else { return }
        let names = Set(unwritten.map(\.name)).sorted().joined(separator: ", ")
        logger.error("stopping with \(unwritten.count) interval\(unwritten.count == 1 ? "" : "s") of \(names) not written to the history (\(writeProblem ?? "unknown error")); they are lost")
    }

    /// Tries the waiting intervals again (the retry timer's work; tests call it).
    func retry() {
        guard !unwritten.isEmpty else { return }
        writeUnwritten()
    }

    // MARK: Reading

    /// The month files there are, oldest first, with their size now: a `History` call
    /// reads each up to that size, so a line appended meanwhile (an interval that ended
    /// after the call, and was reported open) is not read as well. None when there is no
    /// `history/` to read (a read-only state directory without one): what is in memory is
    /// the history. Throws the error that ends the call when `history/` cannot be opened or
    /// listed, or a month's size cannot be read (see `readFailure`).
    func monthsToRead() throws(VarlinkError) -> [(month: HistoryMonth, size: Int64)] {
        let listing: (directory: DirectoryDescriptor, isKept: Bool, months: [HistoryMonth])?
        do throws(Errno) {
            listing = try listToRead()
            listed()
        } catch {
            let reason = "cannot list \(Self.directoryName)/ in the state directory (\(error))"
            if listingProblem == nil {
                logger.error("\(reason); History calls fail until it can be listed")
                listingProblem = reason
                problemChanged(problem)
            }
            throw Self.failure(reason)
        }
        guard let listing else { return [] }
        defer { if !listing.isKept { listing.directory.close() } }
        var months: [(month: HistoryMonth, size: Int64)] = []
        for month in listing.months {
            do throws(Errno) {
                // Deleted since it was listed (pruned): nothing to read. Any other failure
                // (EIO, ENOMEM) is no reason to read the month as empty.
                guard let status = try listing.directory.status(of: month.fileName) else { continue }
                months.append((month, status.size))
            } catch {
                throw readFailure(month, error)
            }
        }
        return months
    }

    /// `history/` to read (`directoryToRead`) and the months it holds; nil when there is no
    /// `history/`.
    private func listToRead() throws(Errno) -> (directory: DirectoryDescriptor, isKept: Bool, months: [HistoryMonth])? {
        let directory: DirectoryDescriptor
        let isKept: Bool
        do throws(Errno) {
            (directory, isKept) = try directoryToRead()
        } catch where error == .noEntry {
            return nil
        }
        do throws(Errno) {
            return (directory, isKept, try listMonths(in: directory))
        } catch {
            if !isKept { directory.close() }
            throw error
        }
    }

    /// `history/` was listed: a listing problem, if any, is no more.
    private func listed() {
        guard listingProblem != nil else { return }
        listingProblem = nil
        problemChanged(problem)
    }

    /// `history/` to read: the one kept for writing, or, when that cannot be opened, one
    /// opened only to read (`openDirectoryToRead`), which the caller closes (`isKept` false).
    private func directoryToRead() throws(Errno) -> (directory: DirectoryDescriptor, isKept: Bool) {
        do throws(Errno) {
            return (try directoryDescriptor(), true)
        } catch {
            guard let openDirectoryToRead else { throw error }
            return (try openDirectoryToRead(), false)
        }
    }

    private func months(in directory: DirectoryDescriptor) -> [HistoryMonth] {
        do {
            return try listMonths(in: directory)
        } catch {
            logger.error("cannot list \(Self.directoryName)/ in the state directory: \(error)")
            return []
        }
    }

    /// The months `directory` holds a file of, oldest first.
    private func listMonths(in directory: DirectoryDescriptor) throws(Errno) -> [HistoryMonth] {
        try directory.entries().compactMap(HistoryMonth.init(fileName:)).sorted()
    }

    /// Opens a month to read: a regular file, never through a link, never waiting on a FIFO.
    /// Nil when there is nothing of this daemon's to read: deleted since it was listed
    /// (pruned), or not a regular file (a directory, FIFO, socket or link where a month
    /// should be, which the daemon never writes: logged once, in `problem`, and skipped).
    /// Any other failure (EMFILE, EIO, EACCES, another program's lease) throws the error
    /// that ends the call (`readFailure`).
    func openToRead(_ month: HistoryMonth) throws(VarlinkError) -> FileDescriptor? {
        let directory: DirectoryDescriptor
        let isKept: Bool
        let file: FileDescriptor
        do throws(Errno) {
            (directory, isKept) = try directoryToRead()
        } catch where error == .noEntry {
            // `history/` deleted since it was listed: nothing to read.
            return nil
        } catch {
            throw readFailure(month, error)
        }
        defer { if !isKept { directory.close() } }
        do throws(Errno) {
            file = try directory.openFile(month.fileName, [.readOnly, .noFollow, .nonBlocking])
        } catch where error == .noEntry {
            return nil
        } catch {
            // A link (ELOOP) or a socket (ENXIO) is told from a failure by what is there.
            if let status = try? directory.status(of: month.fileName), status.kind != .regular {
                unreadable(month, "not a regular file; History answers without it")
                return nil
            }
            throw readFailure(month, error)
        }
        do throws(Errno) {
            guard try file.status().kind == .regular else {
                file.close()
                unreadable(month, "not a regular file; History answers without it")
                return nil
            }
            try file.setNonBlocking(false)
            return file
        } catch {
            file.close()
            throw readFailure(month, error)
        }
    }

    /// The error that ends a `History` call that cannot read `month`, a regular file that
    /// holds intervals (EMFILE, EIO, …), logged once for the file and reported in `problem`.
    ///
    /// The call fails rather than answer without the month: a report summed over a partial
    /// answer would be wrong and say nothing. The IDL (SPEC §3) is fixed, so the error is
    /// one it declares: `ProtocolError`, whose `reason` any client shows and which the
    /// daemon already uses for a call it cannot serve (no descriptor to accept a
    /// connection with, the connection limit). An error of our own, such as
    /// `HistoryUnreadable`, would be outside the interface, unknown to a client's typed
    /// handling; none of the other declared errors means "could not read". As every
    /// `ProtocolError`, it is the connection's last word (`.end`): intervals of the months
    /// before may have been sent already, in replies with `continues`, but no last reply
    /// ever says the answer is whole.
    func readFailure(_ month: HistoryMonth, _ error: Errno) -> VarlinkError {
        unreadable(month, "\(error); History calls fail until it can be read")
        return Self.failure("cannot read the history's \(month) (\(error))")
    }

    private static func failure(_ reason: String) -> VarlinkError {
        .protocolError("\(reason); History fails rather than answer without it")
    }

    private func unreadable(_ month: HistoryMonth, _ reason: String) {
        guard unreadableFiles[month] == nil else { return }
        unreadableFiles[month] = reason
        logger.error("cannot read the history's \(month): \(reason)")
        problemChanged(problem)
    }

    /// A month read to its end: whatever was wrong with it before is no more.
    /// Its earliest start is learned only if nothing was appended since it was listed at
    /// `size`: an append meanwhile may have begun earlier.
    func readWhole(_ month: HistoryMonth, earliestStart: Int64?, size: Int64) {
        if let directory, (try? directory.status(of: month.fileName))??.size == size {
            earliestStarts[month] = earliestStart ?? Int64.max
        }
        if unreadableFiles.removeValue(forKey: month) != nil { problemChanged(problem) }
    }

    /// Lines that are not intervals were skipped in `month`: logged once for that file.
    func skippedBadLines(_ month: HistoryMonth, count: Int) {
        guard filesWithBadLines.insert(month).inserted else { return }
        logger.warning("the history's \(month) holds \(count) line\(count == 1 ? "" : "s") that are not intervals (not JSON, or out of range); skipped")
    }

    func earliestStart(of month: HistoryMonth) -> Int64? {
        earliestStarts[month]
    }

    // MARK: Upkeep

    /// Cuts a month's last line off when it does not end in a newline (torn by a crash
    /// mid-append). Reads only the file's tail, back to the last newline.
    private func cutTornLine(_ month: HistoryMonth, in directory: DirectoryDescriptor) {
        let file: FileDescriptor
        do {
            file = try directory.openFile(month.fileName, [.readWrite, .noFollow, .nonBlocking])
        } catch {
            unreadable(month, "\(error)")
            return
        }
        defer { file.close() }
        do throws(Errno) {
            let status = try file.status()
            guard status.kind == .regular else { throw Errno(EINVAL) }
            guard status.size > 0 else { return }
            // The tail after the last newline, searched for no further back than a line may
            // be long: a longer one is no interval, whatever precedes it.
            let searched = min(status.size, Int64(HistoryStream.maximumLineLength) + 1)
            var tail = [UInt8](repeating: 0, count: Int(searched))
            let read = try tail.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) -> Int in try file.read(into: raw, at: status.size - searched) }
            }.get()
            guard read == tail.count else { throw Errno(EIO) }
            guard tail.last != UInt8(ascii: "\n") else { return }
            let lastNewline = tail.lastIndex(of: UInt8(ascii: "\n"))
            let fragment = tail[(lastNewline.map { $0 + 1 } ?? 0)...]
            let isWhole = lastNewline != nil || searched == status.size
            if isWhole, fragment.withUnsafeBytes({ HistoryLine.parse($0) }) == nil {
                // Torn by a crash mid-append: cut off, the rest kept.
                let keep = status.size - Int64(fragment.count)
                try file.truncate(to: keep)
                try file.dataSync()
                logger.warning("the history's \(month) ended with a torn line (\(fragment.count) bytes, a crash mid-write); cut off")
            } else {
                // A whole interval that lost only its newline (or was written by hand without
                // one), or a line too long to be one: ended, so the next append starts a line
                // of its own. Nothing is cut that could be an interval.
                let newline: [UInt8] = [UInt8(ascii: "\n")]
                let written = try newline.withUnsafeBytes { raw in
                    Result { () throws(Errno) -> Int in try file.write(raw, at: status.size) }
                }.get()
                guard written == 1 else { throw Errno(EIO) }
                try file.dataSync()
                logger.notice("the history's \(month) ended without a newline; one was added")
            }
        } catch {
            unreadable(month, error == Errno(EINVAL) ? "not a regular file" : "\(error)")
        }
    }

    /// Deletes the months whose end is more than `keepDays` days ago.
    func prune() {
        guard let keepDays, let directory = try? directoryDescriptor() else { return }
        let (days, overflow) = Int64(keepDays).multipliedReportingOverflow(by: 86_400_000)
        guard !overflow else { return }
        let limit = wallClock.nowMilliseconds().subtractingReportingOverflow(days).partialValue
        var removed: [String] = []
        for month in months(in: directory) where month.endMilliseconds < limit {
            if current?.month == month { closeCurrent() }
            do {
                try directory.remove(month.fileName)
                earliestStarts[month] = nil
                removed.append(month.fileName)
            } catch {
                logger.error("cannot delete the history's \(month) (older than --history-days \(keepDays)): \(error)")
            }
        }
        guard !removed.isEmpty else { return }
        try? directory.sync()
        logger.info("deleted the history's \(removed.joined(separator: ", ")): older than --history-days \(keepDays)")
    }

    deinit {
        retryTimer?.cancel()
        pruneTimer?.cancel()
        current?.file.close()
        directory?.close()
    }
}
