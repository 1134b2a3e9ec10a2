import LinuxSystem
import StopwatchProtocol
import Varlink

/// Corrections: the index of correction records, built from the months at the first call
/// that needs it, and the lookups by id that Amend, Delete and Undo make.
extension HistoryJournal {
    /// The correction index, built now if no call needed it before: every month read once,
    /// only its correction lines (`{"op":` by their first bytes) parsed, and of its interval
    /// lines only the end (checked without a parse for the daemon's own shape), to find
    /// those written late; a late one is parsed. Throws what a `History` call would fail
    /// with when a month cannot be read.
    func correctionIndex() throws(VarlinkError) -> CorrectionIndex {
        if let corrections { return corrections }
        var index = CorrectionIndex()
        var place = 0
        for (month, size) in try monthsToRead() {
            let file = try forEachLine(of: month, size: size) { line in
                place += 1
                guard HistoryLine.isCorrection(line) else {
                    Self.learnEnd(of: line, in: month, into: &index)
                    return
                }
                if let correction = HistoryCorrection.parse(line) {
                    index.add(correction, device: deviceID, place: place, isOwn: true)
                    latestMadeMs = max(latestMadeMs, correction.madeMs)
                } else {
                    index.damagedLines += 1
                }
            }
            // Which file was read, and how much of it: `History` bisects only that (and what
            // this daemon appends to it). A file that changed between its listing and its
            // opening is not learnt.
            if let file, file.size == size { index.learnt(month, file: file, size: size) }
        }
        // Those not yet written follow, in order.
        for record in pending {
            place += 1
            switch record {
            case .correction(let correction): index.add(correction, device: deviceID, place: place, isOwn: true)
            case .interval(let interval):
                // Learnt for the month `write` puts it in (its end's), after that month's lines;
                // kept late whatever it ends: until it is written, `History` reads it after
                // every month's file, so it is merged in by its end.
                _ = index.isLate(end: record.timeMs, month: HistoryMonth(epochMilliseconds: record.timeMs))
                index.addLate(interval)
            }
        }
        nextPlace = max(nextPlace, place + 1)
        if index.damagedLines > 0 {
            logger.warning("the history holds \(index.damagedLines) damaged correction line\(index.damagedLines == 1 ? "" : "s") (torn, not JSON, or naming no id); skipped, the intervals they named read as before them")
        }
        corrections = index
        if index.damagedLines > 0 { problemChanged(problem) }
        return index
    }

    /// Learns the end of an interval line of `month`'s file read in file order, and keeps the
    /// line if it is late. Only from a line `History` accepts: a damaged one (a broken head
    /// before a tail of the daemon's shape) claiming a far end would make every line after
    /// it late. A line of exactly the daemon's shape, with an id or without, is checked
    /// whole without a parse (`HistoryLine.plainEnd`); any other is parsed (a line that holds
    /// no interval is passed over, as `History` passes over it).
    private static func learnEnd(of line: UnsafeRawBufferPointer, in month: HistoryMonth, into index: inout CorrectionIndex) {
        if let end = HistoryLine.plainEnd(line) {
            guard index.isLate(end: end, month: month), let interval = HistoryLine.parse(line) else { return }
            index.addLate(interval)
        } else if let interval = HistoryLine.parse(line), let end = interval.endMs, index.isLate(end: end, month: month) {
            index.addLate(interval)
        }
    }

    /// Calls `body` with each line of `month` up to `size` (without its newline; a last line
    /// without one too). A line longer than `HistoryStream.maximumLineLength` is passed over,
    /// wherever the chunks cut it: the lines are those `HistoryStream` reads. Returns the
    /// file's status as opened, when it read exactly `size` bytes of it (nil: no file, or
    /// one cut meanwhile).
    @discardableResult
    func forEachLine(
        of month: HistoryMonth, size: Int64, _ body: (UnsafeRawBufferPointer) -> Void
    ) throws(VarlinkError) -> FileStatus? {
        guard let (file, status) = try openToRead(month) else { return nil }
        defer { file.close() }
        var buffer = [UInt8](repeating: 0, count: HistoryStream.bufferSize)
        var carry: [UInt8] = []
        var skipping = false
        var offset: Int64 = 0
        while offset < size {
            let length = Int(min(Int64(buffer.count), size - offset))
            let count: Int
            do throws(Errno) {
                count = try buffer.withUnsafeMutableBytes { raw in
                    Result { () throws(Errno) -> Int in
                        try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<length]), at: offset)
                    }
                }.get()
            } catch {
                throw readFailure(month, error)
            }
            guard count > 0 else { break }
            offset += Int64(count)
            buffer.withUnsafeBytes { raw in
                let chunk = UnsafeRawBufferPointer(rebasing: raw[0..<count])
                var start = 0
                while let newline = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: chunk, from: start) {
                    let piece = UnsafeRawBufferPointer(rebasing: chunk[start..<newline])
                    if skipping {
                        skipping = false
                    } else if carry.isEmpty {
                        // Shorter than the buffer, so than `maximumLineLength`.
                        body(piece)
                    } else if carry.count + piece.count > HistoryStream.maximumLineLength {
                        // Too long once whole, though its start carried was not.
                        carry = []
                    } else {
                        carry.append(contentsOf: piece)
                        let line = carry
                        carry = []
                        line.withUnsafeBytes { body($0) }
                    }
                    start = newline + 1
                }
                if start < count, !skipping {
                    carry.append(contentsOf: chunk[start..<count])
                    if carry.count > HistoryStream.maximumLineLength {
                        carry = []
                        skipping = true
                    }
                }
            }
        }
        if !carry.isEmpty, !skipping {
            carry.withUnsafeBytes { body($0) }
        }
        return offset == size ? status : nil
    }

    /// What an id or a prefix of one names.
    enum Lookup {
        /// One interval, as it is now (`nil`: deleted), and whether a correction set that form.
        case found(id: String, interval: Interval?)
        case none
        /// Several ids begin so, a deleted one followed by " (deleted)".
        case ambiguous([String])
    }

    /// The interval whose id is `prefix` or begins with it, corrections applied: in the
    /// index, or an interval line (or one not yet written) that no record corrects.
    func lookUp(_ prefix: String) throws(VarlinkError) -> Lookup {
        let index = try correctionIndex()
        var found: [String: Interval?] = [:]
        for (id, interval) in index.corrected where id.hasPrefix(prefix) { found[id] = interval }
        func consider(_ interval: Interval) {
            guard interval.id.hasPrefix(prefix), !index.corrects(interval.id) else { return }
            found[interval.id] = interval
        }
        for (month, size) in try monthsToRead() {
            try forEachLine(of: month, size: size) { line in
                guard !HistoryLine.isCorrection(line), HistoryLine.mayHaveID(prefix, line), let interval = HistoryLine.parse(line) else { return }
                consider(interval)
            }
        }
        for interval in unwritten { consider(interval) }
        // A deleted id counts as any other: a Delete retried with the prefix that named it
        // must not find the one other interval left with that prefix and delete it too.
        switch found.count {
        case 0: return .none
        case 1: return .found(id: found.first!.key, interval: found.first!.value)
        default: return .ambiguous(found.sorted { $0.key < $1.key }.map { $0.value == nil ? "\($0.key) (deleted)" : $0.key })
        }
    }

    /// The interval line of `id` as first written, if there is one (an interval tracked has
    /// none); corrections not applied.
    func originalInterval(_ id: String) throws(VarlinkError) -> Interval? {
        var original: Interval?
        for (month, size) in try monthsToRead() where original == nil {
            try forEachLine(of: month, size: size) { line in
                guard original == nil, !HistoryLine.isCorrection(line), HistoryLine.mayHaveID(id, line),
                    let interval = HistoryLine.parse(line), interval.id == id
                else { return }
                original = interval
            }
        }
        return original ?? unwritten.first { $0.id == id }
    }

    /// How far ahead of the wall clock the latest correction may be for a new one to be
    /// stamped with its time rather than now: a clock set back a little never makes a later
    /// correction lose to an earlier one, and one record from far ahead (a clock once set to
    /// the year 9999) does not drag every later one there.
    static let madeAheadToleranceMs: Int64 = 3_600_000

    /// A new correction record: a random record id, made now (never before this daemon's
    /// last one, unless that one is more than `madeAheadToleranceMs` ahead of now: then now,
    /// logged and in the status; this device's records then order by their place only when
    /// their times tie).
    func newCorrection(_ change: HistoryCorrection.Change) -> HistoryCorrection {
        let now = wallClock.nowMilliseconds()
        var madeMs = max(now, latestMadeMs)
        if latestMadeMs > now.addingReportingOverflow(Self.madeAheadToleranceMs).partialValue {
            madeMs = now
            noteCorrectionAhead(latestMadeMs, now: now)
        }
        // A change of an interval whose counting record is dated later (ahead of the clock)
        // is dated just after it, or it would be answered and never count: only that
        // interval's changes follow it; at the last instant allowed, this device's later
        // place wins the tie.
        if case .form(_, let id, _) = change, let counting = corrections?.counting(id), counting.order.madeMs >= madeMs {
            madeMs = min(counting.order.madeMs + 1, Interval.latestMs)
        }
        return HistoryCorrection(record: IntervalIdentity.random(), madeMs: madeMs, change: change)
    }
}
