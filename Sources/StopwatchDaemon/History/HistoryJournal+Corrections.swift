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
    ///
    /// The other devices' months are then looked at (`PeerDevices.refresh`): what is new in
    /// them is read into the index at every call; one that lost lines has the index built anew.
    func correctionIndex() throws(VarlinkError) -> CorrectionIndex {
        if corrections == nil {
            corrections = try ownIndex()
            peers.forget()
            if corrections!.damagedLines > 0 { problemChanged(problem) }
        }
        if case .rebuild = peers.refresh(into: &corrections!) {
            logger.info("a device's history in the history folder lost or changed lines (months pruned, a file replaced by a shorter or different one): the correction index is built anew")
            corrections = try ownIndex()
            peers.forget()
            _ = peers.refresh(into: &corrections!)
        }
        if !corrections!.needingOrigin.isEmpty {
            // With no other device's months every line is this device's, and so is every
            // record: the device an interval is shown under is this one, found or not. (A
            // record another device adds later asks for its interval's line again.)
            if peers.holdMonths { try seekOrigins() } else { corrections!.originsSought() }
        }
        notePeerProblem()
        return corrections!
    }

    /// What the peers' folders hold that was skipped, in `problem` when it changed.
    func notePeerProblem() {
        guard peers.problem != peerProblem else { return }
        peerProblem = peers.problem
        problemChanged(problem)
    }

    /// Finds, in every device's months, the lines of the intervals whose records came after
    /// them (`CorrectionIndex.needingOrigin`): which device each is shown under. Paid once per
    /// such record: a line that arrives later is learnt as it is read.
    private func seekOrigins() throws(VarlinkError) {
        let sought = corrections!.needingOrigin
        func look(_ line: UnsafeRawBufferPointer, _ device: String) {
            guard HistoryLine.hasIDPrefix(line), let id = HistoryLine.hexNumber(line, at: 7), sought.contains(id) else { return }
            corrections!.learnOrigin(id, device: device)
        }
        for (month, size) in try monthsToRead() {
            try forEachLine(of: month, size: size) { look($0, deviceID) }
        }
        for source in peers.sources(device: nil) {
            for (month, size) in source.months {
                guard let (file, _) = peers.open(month, of: source.id) else { continue }
                defer { file.close() }
                _ = try? PeerDevices.forEachWholeLine(of: file, from: 0, to: size) { line, _ in look(line, source.id) }
            }
        }
        corrections!.originsSought()
    }

    /// The index of this device's own months (and records not written yet).
    private func ownIndex() throws(VarlinkError) -> CorrectionIndex {
        var index = CorrectionIndex()
        var place = 0
        for (month, size) in try monthsToRead() {
            let file = try forEachLine(of: month, size: size) { line in
                place += 1
                guard HistoryLine.isCorrection(line) else {
                    Self.learnEnd(of: line, in: month, device: deviceID, into: &index)
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
                _ = index.isLate(end: record.timeMs, month: HistoryMonth(epochMilliseconds: record.timeMs), device: deviceID)
                index.addLate(interval, device: deviceID)
            }
        }
        nextPlace = max(nextPlace, place + 1)
        if index.damagedLines > 0 {
            logger.warning("the history holds \(index.damagedLines) damaged correction line\(index.damagedLines == 1 ? "" : "s") (torn, not JSON, or naming no id); skipped, the intervals they named read as before them")
        }
        return index
    }

    /// Learns the end of an interval line of `month`'s file read in file order, and keeps the
    /// line if it is late. Only from a line `History` accepts: a damaged one (a broken head
    /// before a tail of the daemon's shape) claiming a far end would make every line after
    /// it late. A line of exactly the daemon's shape, with an id or without, is checked
    /// whole without a parse (`HistoryLine.plainEnd`); any other is parsed (a line that holds
    /// no interval is passed over, as `History` passes over it).
    ///
    /// `device` is the device whose folder holds the file: its lines are late among its own
    /// only, and a line whose id a record corrects tells the index which device it is shown under.
    /// Returns false for a line that holds no interval (and is not empty): `History` skips it.
    @discardableResult
    static func learnEnd(of line: UnsafeRawBufferPointer, in month: HistoryMonth, device: String, into index: inout CorrectionIndex) -> Bool {
        if let end = HistoryLine.plainEnd(line) {
            if HistoryLine.hasIDPrefix(line), let id = HistoryLine.hexNumber(line, at: 7) { index.learnOrigin(id, device: device) }
            guard index.isLate(end: end, month: month, device: device), let interval = HistoryLine.parse(line) else { return true }
            index.addLate(interval, device: device)
        } else if let interval = HistoryLine.parse(line), let end = interval.endMs {
            if let id = CorrectionIndex.number(interval.id) { index.learnOrigin(id, device: device) }
            if index.isLate(end: end, month: month, device: device) { index.addLate(interval, device: device) }
        } else {
            return line.isEmpty
        }
        return true
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
        var lines = LineSplitter(from: 0)
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
            buffer.withUnsafeBytes { raw in
                lines.feed(UnsafeRawBufferPointer(rebasing: raw[0..<count]), at: offset, longLine: {}) { line, _ in body(line) }
            }
            offset += Int64(count)
        }
        lines.lastLine?.bytes.withUnsafeBytes { body($0) }
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
    /// index, or an interval line (or one not yet written) that no record corrects, in this
    /// device's months or another device's (as far as `PeerDevices` learnt them). Its
    /// `device` is the name of the device it is shown under. An interval found by its line
    /// teaches the index which device that is (`CorrectionIndex.setOrigin`): an Amend of it
    /// that follows is shown under that device, not this one.
    func lookUp(_ prefix: String) throws(VarlinkError) -> Lookup {
        let index = try correctionIndex()
        var found: [String: Interval?] = [:]
        var origins: [String: String] = [:]
        for (id, interval) in index.corrected where id.hasPrefix(prefix) {
            // A deleted one (nil) is kept as such: `found[id] = nil` would remove the key.
            var shown: Interval? = interval
            shown?.device = deviceName(ofInterval: id)
            found.updateValue(shown, forKey: id)
        }
        func consider(_ interval: Interval, device: String) {
            guard interval.id.hasPrefix(prefix), !index.corrects(interval.id) else { return }
            found[interval.id] = interval
            origins[interval.id] = device
        }
        try forEachIntervalLine(mayHave: prefix) { consider($0, device: $1) }
        for interval in unwritten {
            var shown = interval
            shown.device = deviceName
            consider(shown, device: deviceID)
        }
        // A deleted id counts as any other: a Delete retried with the prefix that named it
        // must not find the one other interval left with that prefix and delete it too.
        switch found.count {
        case 0: return .none
        case 1:
            let (id, interval) = found.first!
            if let origin = origins[id] { corrections?.setOrigin(id, device: origin) }
            return .found(id: id, interval: interval)
        default: return .ambiguous(found.sorted { $0.key < $1.key }.map { $0.value == nil ? "\($0.key) (deleted)" : $0.key })
        }
    }

    /// The interval line of `id` as first written, if there is one (an interval tracked has
    /// none), in any device's months; corrections not applied.
    func originalInterval(_ id: String) throws(VarlinkError) -> Interval? {
        var original: Interval?
        try forEachIntervalLine(mayHave: id) { interval, _ in
            if original == nil, interval.id == id { original = interval }
        }
        return original ?? unwritten.first { $0.id == id }.map { var shown = $0; shown.device = deviceName; return shown }
    }

    /// Calls `body` with every interval line, this device's months first, then the peers'
    /// (up to their last whole line learnt), that may hold an id beginning with `prefix`
    /// (`HistoryLine.mayHaveID`), with `device` set to its device's name, and its device's id.
    private func forEachIntervalLine(mayHave prefix: String, _ body: (Interval, String) -> Void) throws(VarlinkError) {
        func take(_ line: UnsafeRawBufferPointer, name: String, id: String) {
            guard !HistoryLine.isCorrection(line), HistoryLine.mayHaveID(prefix, line), var interval = HistoryLine.parse(line) else { return }
            interval.device = name
            body(interval, id)
        }
        for (month, size) in try monthsToRead() {
            try forEachLine(of: month, size: size) { take($0, name: deviceName, id: deviceID) }
        }
        for source in peers.sources(device: nil) {
            for (month, size) in source.months {
                guard let (file, _) = peers.open(month, of: source.id) else { continue }
                defer { file.close() }
                _ = try? PeerDevices.forEachWholeLine(of: file, from: 0, to: size) { line, _ in take(line, name: source.name, id: source.id) }
            }
        }
    }

    /// The name of the device an interval the index sets the form of is shown under: the one
    /// whose files hold its line, or that tracked it (`CorrectionIndex.device(ofCorrected:)`);
    /// this device's for any other.
    func deviceName(ofInterval id: String) -> String {
        guard let device = corrections?.device(ofCorrected: id), device != deviceID else { return deviceName }
        return peers.peers[device]?.name ?? device
    }

    /// How far ahead of the wall clock the latest correction may be for a new one to be
    /// stamped with its time rather than now: a clock set back a little never makes a later
    /// correction lose to an earlier one, and one record from far ahead (a clock once set to
    /// the year 9999) does not drag every later one there.
    static let madeAheadToleranceMs: Int64 = 3_600_000

    /// A new correction record: a random record id, made now (never before this daemon's
    /// last one, unless that one is more than `madeAheadToleranceMs` ahead of now: then now,
    /// logged and in the status; this device's records then order by their place only when
    /// their times tie). Any device's record is followed so within the tolerance only: a change
    /// of the interval a record sets is dated after it however far ahead (or it would never
    /// count), but one further ahead than the tolerance (another device's wrong clock) does not
    /// become the time this device's later corrections get (`append`).
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
