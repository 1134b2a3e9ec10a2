import LinuxSystem
import StopwatchProtocol
import Varlink

/// Reading, for `History` calls (`HistoryStream`): which months there are, each opened
/// safely, the error that fails a call that cannot read one, and what a call learned.
extension HistoryJournal {
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
            let reason = "cannot list the history's device folder (\(error))"
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

    /// Opens a month to read: a regular file, never through a link, never waiting on a FIFO;
    /// with its status as opened (which file it is: `CorrectionIndex.hasLearnt`).
    /// Nil when there is nothing of this daemon's to read: deleted since it was listed
    /// (pruned), or not a regular file (a directory, FIFO, socket or link where a month
    /// should be, which the daemon never writes: logged once, in `problem`, and skipped).
    /// Any other failure (EMFILE, EIO, EACCES, another program's lease) throws the error
    /// that ends the call (`readFailure`).
    func openToRead(_ month: HistoryMonth) throws(VarlinkError) -> (file: FileDescriptor, status: FileStatus)? {
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
            let status = try file.status()
            guard status.kind == .regular else {
                file.close()
                unreadable(month, "not a regular file; History answers without it")
                return nil
            }
            try file.setNonBlocking(false)
            return (file, status)
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

    /// A month read to its end, from its first line or from where a bisection began
    /// (`HistoryStream.startOffset`): whatever was wrong with it before is no more.
    func readToEnd(_ month: HistoryMonth) {
        if unreadableFiles.removeValue(forKey: month) != nil { problemChanged(problem) }
    }

    /// A month read whole, from its first line: its earliest start is learned, if nothing was
    /// appended since it was listed at `size` (an append meanwhile may have begun earlier).
    func readWhole(_ month: HistoryMonth, earliestStart: Int64?, size: Int64) {
        if let directory, (try? directory.status(of: month.fileName))??.size == size {
            earliestStarts[month] = earliestStart ?? Int64.max
        }
    }

    /// Lines that are not intervals were skipped in `month`: logged once for that file.
    func skippedBadLines(_ month: HistoryMonth, count: Int) {
        guard filesWithBadLines.insert(month).inserted else { return }
        logger.warning("the history's \(month) holds \(count) line\(count == 1 ? "" : "s") that are not intervals (not JSON, or out of range); skipped")
    }

    func earliestStart(of month: HistoryMonth) -> Int64? {
        earliestStarts[month]
    }
}
