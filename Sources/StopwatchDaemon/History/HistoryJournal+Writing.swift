import Dispatch
import Glibc
import LinuxSystem
import StopwatchProtocol

/// Writing: an append goes to the current month's file and is `fdatasync`ed; what cannot be
/// written waits in `unwritten`, in order, retried on a timer and once more before exit.
extension HistoryJournal {
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

    func closeCurrent() {
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
}
