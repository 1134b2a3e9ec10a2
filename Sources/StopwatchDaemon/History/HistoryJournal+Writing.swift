import Dispatch
import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// A line the journal writes: an interval that ended, or a correction.
enum HistoryRecord: Sendable {
    case interval(Interval)
    case correction(HistoryCorrection)

    /// The time whose UTC month is its file's: an interval's end, a correction's making.
    var timeMs: Int64 {
        switch self {
        case .interval(let interval): interval.endMs ?? interval.startMs
        case .correction(let correction): correction.madeMs
        }
    }
}

/// When an appended line is flushed (`fdatasync`).
enum HistoryFlush: Sendable {
    /// Before `append` returns: what a command's reply waits for.
    case now
    /// In the file (the page cache, which outlives the daemon) when `append` returns, flushed
    /// after the change is told (`flushSoon`: on the daemon's `DurableWriter`, or in a turn of
    /// the queue, `flushWritten`), and before anything else is flushed that a power loss
    /// could keep without it (a line written `.now`, which learns the flushes in flight
    /// first; a stopwatch's state file: `StateStore.beforeSaving`, or, for the writer's
    /// batches, `StateStore.beforeHandingOver`, the flush handed over ahead of them). A month's file made for it
    /// is made as for any line (its entry flushed and recorded before the line is written):
    /// once a month. One whose flush fails waits in `pending` again, to be written again (a
    /// duplicate rather than a loss, should the first reach the disk after all). A daemon
    /// killed before the flush leaves the lines in the page cache: the next start flushes
    /// them (`start`) before anything relies on them. For an automatic phase
    /// change, whose line a power loss would not lose: the state file it follows from,
    /// still on disk, makes it again at the next start (`StopwatchService.resumeCountdowns`).
    /// The outbox's record that the phase was told, which a restart in the same boot takes
    /// as its line written, can reach the disk without the line only if the machine goes
    /// down, and the restart is then in another boot, whose told records those are not.
    case afterTelling
}

/// Writing: an append goes to the current month's file and is `fdatasync`ed (a phase's
/// after it is told, on the `DurableWriter`: `HistoryFlush`); what cannot be written waits in
/// `pending`, in order, retried on a timer and once more before exit.
extension HistoryJournal {
    /// Records an interval that ended: on disk when this returns (`flush` `.now`), or waiting
    /// in memory, in order, if writing fails.
    /// One without an id gets a new random one. Returns it as recorded.
    @discardableResult
    func append(_ interval: Interval, flush: HistoryFlush = .now) -> Interval {
        var interval = interval
        if interval.id.isEmpty { interval.id = IntervalIdentity.random() }
        interval.device = ""
        // Written after lines of its month that end later (a stop at an earlier instant, a
        // wall clock set back): the index keeps it, for `History` to read in end order. Its
        // month is the one `write` puts it in.
        let end = interval.endMs ?? interval.startMs
        let isLate = corrections?.isLate(end: end, month: HistoryMonth(epochMilliseconds: end), device: deviceID) == true
        pending.append(.interval(interval))
        nextPlace += 1
        writeUnwritten(flush: flush)
        // Still waiting (writing fails; the last to be written of those waiting): `History`
        // reads it after every month's file, so it is merged in by its end too.
        if isLate || !pending.isEmpty { corrections?.addLate(interval, device: deviceID) }
        return interval
    }

    /// Records a correction: on disk (after the intervals waiting, which go first) when this
    /// returns, then in the index; or, when it cannot be written now, refused with nothing
    /// changed: never kept in memory, so that a reply always means a record on disk (the
    /// client may try again; docs/RELIABILITY.md).
    func append(_ correction: HistoryCorrection) throws(VarlinkError) {
        takeBackUnflushed()
        if !pending.isEmpty { writeUnwritten() }
        do throws(Errno) {
            guard pending.isEmpty else { throw Errno(EAGAIN) }
            try write(.correction(correction))
        } catch {
            let reason = foreignWriter ?? writeProblem ?? "cannot write to the history folder: \(error)"
            if writeProblem == nil, foreignWriter == nil { failed(reason) }
            // Opened again at the next write, whose open ends or cuts a line this one may
            // have left torn (when its own cut failed too).
            closeCurrent()
            // Lines written before it whose flush failed with its own wait to be written again.
            takeBackUnflushed()
            throw .protocolError("the history cannot be written now (\(reason)); nothing was changed: try again later")
        }
        if writeProblem != nil, flushFailure == nil { writtenAgain() }
        // The last month's lines, whose flush failed as its file closed for this one's.
        takeBackUnflushed()
        corrections?.add(correction, device: deviceID, place: nextPlace, isOwn: true)
        nextPlace += 1
        // Dated after a record further ahead than the tolerance (`newCorrection`: another
        // device's clock, or this one's once), it does not move the time the next get.
        if correction.madeMs <= wallClock.nowMilliseconds().addingReportingOverflow(Self.madeAheadToleranceMs).partialValue {
            latestMadeMs = max(latestMadeMs, correction.madeMs)
        }
    }

    /// The folder could not be prepared at start (`HistoryFolder.startProblem`): in the
    /// status until a write works.
    func startedUnwritable(_ reason: String) {
        guard writeProblem == nil else { return }
        // Already logged by the folder: said here only in the status, and retried.
        writeProblem = reason
        problemChanged(problem)
        failed(reason)
    }

    private func writeUnwritten(flush: HistoryFlush = .now) {
        takeBackUnflushed()
        writePending(flush: flush)
        takeBackUnflushed()
    }

    private func writePending(flush: HistoryFlush) {
        var written = 0
        defer { pending.removeFirst(written) }
        for record in pending {
            do throws(Errno) {
                try write(record, flush: flush)
                written += 1
            } catch {
                // Kept in memory, not retried: another writer's file is never written.
                if foreignWriter != nil { return }
                let left = pending.count - written
                failed("cannot write to the history folder: \(error); \(left) interval\(left == 1 ? "" : "s") kept in memory until it works")
                return
            }
        }
        // Not when a flush failed meanwhile (a month's file closing): its take-back is next.
        if writeProblem != nil, flushFailure == nil { writtenAgain() }
    }

    /// Writing works again after it failed: said once, the retries stopped.
    private func writtenAgain() {
        guard let writeProblem else { return }
        logger.notice("the history is written again (it failed with: \(writeProblem))")
        self.writeProblem = nil
        retryTimer?.cancel()
        retryTimer = nil
        problemChanged(problem)
    }

    /// Flushes the lines written with `.afterTelling` since the last flush, if any. A flush
    /// that fails is a failed write: its records wait in `pending` again (`takeBackUnflushed`;
    /// a retry of `fdatasync` after an error says nothing on Linux, whose pages are then
    /// marked clean whether or not they reached the disk).
    func flushWritten() {
        flushCurrent()
        takeBackUnflushed()
    }

    /// Flushes `unflushed`, the lines in `current`'s file, if any, after those handed over; a
    /// flush that fails sets them aside (`unflushedFailed`).
    private func flushCurrent() {
        learnFlushes(waiting: true)
        guard !unflushed.isEmpty, let current else { return }
        do throws(Errno) {
            try syncData(current.file)
            unflushed = []
        } catch {
            unflushedFailed(error)
        }
    }

    /// A flush of `unflushed` (the lines in `current`'s file) failed: their records are set
    /// aside for `takeBackUnflushed`, never flushed again (a second `fdatasync` after an error
    /// returns 0 on Linux, the pages marked clean whether or not they reached the disk).
    private func unflushedFailed(_ error: Errno) {
        flushFailed += unflushed
        unflushed = []
        flushFailure = error
    }

    /// After a flush of lines written `.afterTelling` failed (`flushFailed`: here, as the
    /// month's file closed, or with a line written `.now`; or on the writer, `learnFlushes`):
    /// their records wait in `pending`
    /// again, first (before any record still waiting, all newer), and writing is retried as
    /// after any failed write. Called only where `pending` is not being written from, and
    /// before it is.
    private func takeBackUnflushed() {
        guard let error = flushFailure else { return }
        // The month's file closed first (as `failed` does): lines whose flush fails there too
        // are set aside with these, after them, in the order they were written.
        closeCurrent()
        flushFailure = nil
        let records = flushFailed
        flushFailed = []
        pending.insert(contentsOf: records, at: 0)
        for case .interval(let interval) in records { corrections?.addLate(interval, device: deviceID) }
        failed("cannot flush the history to disk: \(error); \(records.count) interval\(records.count == 1 ? "" : "s") kept in memory until it works")
    }

    /// Flushes in a later turn of the queue, after what this turn told: hands the flush to
    /// `writer` (`handOverFlush`; while one is in flight, its result's turn hands the next,
    /// one flush of all the lines written meanwhile), or flushes there and then without one
    /// (`flushWritten`).
    func flushSoon() {
        guard !unflushed.isEmpty, !isFlushComing else { return }
        isFlushComing = true
        queue.async { [weak self] in
            guard let self else { return }
            isFlushComing = false
            if writer == nil {
                flushWritten()
            } else if flushesInFlight.isEmpty {
                handOverFlush()
            }
        }
    }

    /// Hands the flush of the lines written `.afterTelling` (`unflushed`) to `writer`, behind
    /// the work already handed over; their records are in flight until its result is learnt
    /// (`learnFlushes`), in a later turn. Without a writer, or a descriptor for it, flushes
    /// them now (`flushWritten`).
    func handOverFlush() {
        guard !unflushed.isEmpty, let current else { return }
        // A duplicate: the month's file may be closed here while the writer flushes it.
        guard let writer, let file = try? current.file.duplicate() else { return flushWritten() }
        flushesInFlight.append(unflushed)
        unflushed = []
        let (syncData, results) = (self.syncData, flushResults)
        // Made here: the job holds no reference to the journal, which is this queue's.
        let learn: @Sendable () -> Void = { [weak self] in
            guard let self else { return }
            learnFlushes()
            takeBackUnflushed()
            // The lines written while it was in flight (`flushSoon` left them to this turn).
            if flushesInFlight.isEmpty { handOverFlush() }
        }
        writer.hand { [queue] in
            defer { file.close() }
            do throws(Errno) {
                try syncData(file)
                results.withLock { $0.append(nil) }
            } catch {
                results.withLock { $0.append(error) }
            }
            queue.async(execute: learn)
        }
    }

    /// Learns the results of the flushes handed over that have run; with `waiting`, of all of
    /// them (the writer drained first), as any flush here does before its own. A failure sets
    /// aside its records, and those of every flush handed over after it and of every line
    /// written since (`unflushed`): their pages may have been in the writeback that failed,
    /// whose error only one `fdatasync` of the open file reports, so their own flushes say
    /// nothing. Returns that failure's error, if one was learnt now; its records wait for
    /// `takeBackUnflushed`.
    @discardableResult
    func learnFlushes(waiting: Bool = false) -> Errno? {
        guard !flushesInFlight.isEmpty || flushResultsToDrop > 0 else { return nil }
        // Not for results to drop: those flushes' lines are set aside, and the file they
        // flush closed (`takeBackUnflushed`) before another line is written to it.
        if waiting, !flushesInFlight.isEmpty { writer?.drain() }
        var results = flushResults.withLock { results in
            defer { results = [] }
            return results
        }
        let dropped = min(flushResultsToDrop, results.count)
        results.removeFirst(dropped)
        flushResultsToDrop -= dropped
        for (index, result) in results.enumerated() where !flushesInFlight.isEmpty {
            let records = flushesInFlight.removeFirst()
            guard let error = result else { continue }
            // Those handed over after it whose results are not in yet are dropped when they are.
            flushResultsToDrop += flushesInFlight.count - (results.count - index - 1)
            flushFailed += records + flushesInFlight.joined() + unflushed
            flushesInFlight = []
            unflushed = []
            flushFailure = error
            return error
        }
        return nil
    }

    private func write(_ record: HistoryRecord, flush: HistoryFlush = .now) throws(Errno) {
        guard foreignWriter == nil else { throw Errno(EPERM) }
        let month = HistoryMonth(epochMilliseconds: record.timeMs)
        var file = try file(for: month)
        var status = try file.status()
        if status.linkCount == 0 {
            // Replaced while kept open by another file (a sync tool renamed another writer's
            // over it): not this daemon's to write (`OwnFolderRecord`), when it guards.
            if ownFolderGuard != nil, let found = try directory?.status(of: month.fileName), found.kind == .regular {
                throw foundForeignWriter(month, keptInode: status.inode, found: found)
            }
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
        switch record {
        case .interval(let interval): HistoryLine.encode(interval, into: &line)
        case .correction(let correction): correction.encode(into: &line)
        }
        do throws(Errno) {
            try file.writeAll(line)
            switch flush {
            case .now:
                // The lines written before it (`.afterTelling`) too: one file.
                do throws(Errno) {
                    // Those handed over first: one that failed fails this line too, which
                    // may have been in the writeback that failed (its error told only once).
                    if let error = learnFlushes(waiting: true) { throw error }
                    try syncData(file)
                } catch {
                    if !unflushed.isEmpty { unflushedFailed(error) }
                    throw error
                }
                unflushed = []
            case .afterTelling:
                unflushed.append(record)
            }
        } catch {
            // Never a partial line in the middle of the file: the next append would follow it.
            try? file.truncate(to: status.size)
            throw error
        }
        // The index learns the record itself (`append`): the file stays learnt, up to its new
        // size, if it was learnt up to its size before this line.
        corrections?.appended(line.count, to: month, before: status, after: try? file.status())
        ownRecord?.months[month.fileName] = OwnFolderRecord.Mark(inode: status.inode, size: status.size + Int64(line.count))
        if case .interval(let interval) = record, let earliest = earliestStarts[month] {
            earliestStarts[month] = min(earliest, interval.startMs)
        }
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
            // Empty, and this daemon's: the index has learnt all of it (its lines are those
            // appended next). A month made again after its file was deleted (by hand, by a
            // backup tool) drops the index: its late lines and greatest end for the month
            // were the old file's, whose intervals would otherwise come back; it is built
            // again from the files at the next call that needs it. So does a status that
            // cannot be read.
            let status = try? created.status()
            if let status, corrections?.hasLearntFile(month) != true {
                corrections?.learnt(month, file: status, size: 0)
            } else {
                corrections = nil
            }
            if let status { noteOwnMonth(month, OwnFolderRecord.Mark(inode: status.inode, size: 0)) }
        } catch where error == .exists {
            // There already: appended to.
        }
        let file: FileDescriptor
        if let opened {
            file = opened
        } else {
            // A line left torn (a crash, a failed write whose cut failed too) is ended or cut
            // off before anything is appended: never glued to the next record.
            // Judged before anything is cut: another writer's file is never changed.
            if let found = try directory.status(of: month.fileName), found.kind == .regular { try judgeOwnMonth(month, found) }
            try cutTornLine(month, in: directory)
            file = try directory.openFile(month.fileName, flags, mode: 0o600)
        }
        let inode: UInt64
        do throws(Errno) {
            inode = try file.status().inode
        } catch {
            file.close()
            throw error
        }
        current = (month, file, inode)
        return file
    }

    /// Closes the month's file, flushed first if lines wait for it (the month ends, the file
    /// was replaced or fails); a flush that fails leaves their records to `takeBackUnflushed`.
    func closeCurrent() {
        flushCurrent()
        current?.file.close()
        current = nil
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
        // `open.json`, if a write was asked for (`OpenIntervalsSchedule.flush`).
        openIntervalsFile.wait()
        flushWritten()
        retry()
        saveOwnRecord()
        guard !pending.isEmpty else { return }
        let intervals = unwritten
        let names = Set(intervals.map(\.name)).sorted().joined(separator: ", ")
        let corrections = pending.count - intervals.count
        logger.error("stopping with \(intervals.count) interval\(intervals.count == 1 ? "" : "s")\(names.isEmpty ? "" : " of " + names) and \(corrections) correction\(corrections == 1 ? "" : "s") not written to the history (\(foreignWriter ?? writeProblem ?? "unknown error")); they are lost")
    }

    /// Tries the waiting intervals again (the retry timer's work; tests call it).
    /// With nothing waiting (a refused correction, a folder unprepared at start), the problem
    /// clears once the month's file opens again.
    func retry() {
        takeBackUnflushed()
        if !pending.isEmpty { return writeUnwritten() }
        guard writeProblem != nil else { return }
        do throws(Errno) {
            _ = try file(for: HistoryMonth(epochMilliseconds: wallClock.nowMilliseconds()))
            writtenAgain()
        } catch {
            closeCurrent()
            directory?.close()
            directory = nil
        }
    }
}
