import Dispatch
import Glibc
import LinuxSystem

/// Upkeep: at start, torn last lines cut off; at start and daily, the months
/// `--history-days` no longer keeps deleted.
extension HistoryJournal {
    /// At start: cuts off each month's torn last line (a crash mid-append), deletes the
    /// months `--history-days` no longer keeps, and prunes again once a day.
    func start() {
        if let directory = try? directoryDescriptor() {
            // A daemon killed before it flushed its phases' lines (`HistoryFlush.afterTelling`)
            // left them in the page cache, where this boot finds them: flushed now (each
            // month's file changed since the machine booted, and the folder), before a state
            // file saved from here on relies on them. (Usually the newest month alone; a
            // catch-up across a month's end writes lines of both.)
            let bootedNs = Posix.clockTime(.realtime).nanoseconds - Posix.clockTime(.boot).nanoseconds
            for month in months(in: directory) { try? cutTornLine(month, in: directory, flushingIfChangedSince: bootedNs) }
            do throws(Errno) {
                try directory.sync()
            } catch {
                logger.warning("cannot flush the history's device folder: \(error)")
            }
        }
        prune()
        guard keepDays != nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .seconds(86_400), repeating: .seconds(86_400), leeway: .seconds(60))
        timer.setEventHandler { [weak self] in self?.prune() }
        pruneTimer = timer
        timer.activate()
    }

    private func months(in directory: DirectoryDescriptor) -> [HistoryMonth] {
        do {
            return try listMonths(in: directory)
        } catch {
            logger.error("cannot list the history's device folder: \(error)")
            return []
        }
    }

    /// Cuts a month's last line off when it does not end in a newline (torn by a crash
    /// mid-append). Reads only the file's tail, back to the last newline. Throws when the
    /// tail could not be read or mended (also told as the month being unreadable): nothing
    /// may then be appended to it, or the next record would be glued to the torn line.
    func cutTornLine(_ month: HistoryMonth, in directory: DirectoryDescriptor, flushingIfChangedSince changedNs: Int64? = nil) throws(Errno) {
        let file: FileDescriptor
        do throws(Errno) {
            file = try directory.openFile(month.fileName, [.readWrite, .noFollow, .nonBlocking])
        } catch {
            unreadable(month, "\(error)")
            throw error
        }
        defer {
            if let changedNs, (try? file.status())?.changeTime ?? .max >= changedNs {
                do throws(Errno) {
                    try file.dataSync()
                } catch {
                    logger.warning("cannot flush the history's \(month): \(error)")
                }
            }
            file.close()
        }
        do throws(Errno) {
            let status = try file.status()
            guard status.kind == .regular else { throw Errno(EINVAL) }
            // Open and regular again (it was not at an earlier try): no longer a problem.
            if unreadableFiles.removeValue(forKey: month) != nil { problemChanged(problem) }
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
            // A whole interval or correction that lost only its newline is kept.
            if isWhole, fragment.withUnsafeBytes({ HistoryLine.parse($0) == nil && HistoryCorrection.parse($0) == nil }) {
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
            throw error
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
                ownRecord?.months[month.fileName] = nil
                removed.append(month.fileName)
            } catch {
                logger.error("cannot delete the history's \(month) (older than --history-days \(keepDays)): \(error)")
            }
        }
        guard !removed.isEmpty else { return }
        // Records and late lines gone from disk no longer count: the index is built again when
        // next needed.
        corrections = nil
        try? directory.sync()
        logger.info("deleted the history's \(removed.joined(separator: ", ")): older than --history-days \(keepDays)")
    }
}
