import LinuxSystem
import StopwatchProtocol

/// What the journal's correction records say, in memory: for each interval id corrected,
/// the form that counts now (SPEC §4 "History across devices", docs/HISTORY.md).
///
/// The rules: for each interval id, the record that counts is the latest not-undone
/// `track`, `amend` or `delete` by (`made_ms`, device id, its place in that device's files);
/// none, and the interval reads as its original line (or, tracked, is not there). A `delete`
/// that counts removes it. An `undo` takes back the record it names, whenever it is read.
///
/// It also holds the interval lines written out of end order ("late": a `Stop` with `at_ms`
/// ends an interval before lines already written, and so does a wall clock set back).
/// `History` reads the months in ascending order, each in file order, and must answer in
/// end order, so it passes over a late line where it lies and merges it in end order, as it
/// does corrected ones. A line is late among the lines of its own month's file only: the
/// daemon writes an interval into the file of its end's month, so the lines of earlier
/// months all end before that month begins. A line whose end lies outside its file's month
/// (written by hand, or moved) is late; any other is late when it ends before the greatest
/// end of its month's lines before it (`isLate(end:month:)`). So a line far ahead (a clock
/// once set to a later month, a year-9999 file) makes no later append late. An interval not
/// written yet (writing fails) is read after every month's file: held late until then.
///
/// Its size is the number of corrections and late lines, never the number of intervals:
/// other interval lines are not in it (and a greatest end and a learnt file per month).
/// Built by the journal from the months (the correction lines parsed, the ends of the
/// interval lines `History` accepts learnt), then kept current by the journal's own
/// appends. A month file changed from outside meanwhile (edited, restored, a copy renamed
/// over it, even edited in place at the same size) is not learnt: for each month it also
/// keeps which file it learnt, its change time, and up to which size (`LearntFile`), so that
/// `History` trusts the end order of only those bytes.
///
/// A value type, used on the server's queue only (its owner's).
struct CorrectionIndex: Sendable {
    /// Orders records: later wins; a tie goes to the greater device id, then to the later
    /// place in that device's files.
    struct Order: Comparable, Sendable {
        var madeMs: Int64
        var device: String
        var place: Int

        static func < (a: Order, b: Order) -> Bool {
            if a.madeMs != b.madeMs { return a.madeMs < b.madeMs }
            if a.device != b.device { return Array(a.device.utf8).lexicographicallyPrecedes(Array(b.device.utf8)) }
            return a.place < b.place
        }
    }

    /// A track, amend or delete, as the index answers it.
    struct Form: Sendable {
        var order: Order
        var operation: HistoryCorrection.Operation
        var intervalID: String
        /// The interval as the record makes it (nil: deleted).
        var interval: Interval?
    }

    /// A track, amend or delete as kept: ids as numbers, its interval without its id (a
    /// 16-digit string is an allocation of its own), one array element each. A dictionary of
    /// string ids to `Form`s, twice over, was 900 bytes a correction.
    private struct Record: Sendable {
        var record: UInt64
        var madeMs: Int64
        var device: String
        var place: Int
        var operation: HistoryCorrection.Operation
        var intervalID: UInt64
        /// Its id left empty (it is `intervalID`).
        var interval: Interval?
        /// The record before it of the same interval id, if any: a list per interval id.
        var previous: Int32
        var undone = false

        var order: Order { Order(madeMs: madeMs, device: device, place: place) }

        var form: Form {
            var interval = interval
            interval?.id = IntervalIdentity.hex(intervalID)
            return Form(order: order, operation: operation, intervalID: IntervalIdentity.hex(intervalID), interval: interval)
        }
    }

    /// The track, amend and delete records, in the order added.
    private var records: [Record] = []
    /// Where each record id is in `records`.
    private var placeOfRecord: [UInt64: Int32] = [:]
    /// For each interval id, its latest record in `records` (the head of its list).
    private var latestOfInterval: [UInt64: Int32] = [:]
    /// Records taken back by an undo (also those not read yet: an undo may come first).
    private var undone: Set<UInt64> = []
    /// This device's records in its files' order (by month, then by place in the month's
    /// file), the same whether added as appended or as read at a restart: `Undo` takes back
    /// the latest of them not yet undone.
    private var ownRecords: [Int32] = []
    /// For each interval id whose form a record sets, the record that counts now.
    private var countingRecord: [UInt64: Int32] = [:]
    /// Interval lines written late (out of end order), as written.
    private var lateLines: [Interval] = []
    /// The device whose file holds each of `lateLines`.
    private var lateDevices: [String] = []
    /// For the interval ids a record sets the form of (and not by `track`), the device whose
    /// files hold the interval's line: the device a corrected interval is shown under is the
    /// one that recorded it, not the one that corrected it. Learnt from the lines read
    /// (`learnOrigin`); `needingOrigin` are those whose line may have been read before their
    /// record (another device's file read earlier): the journal looks for them once.
    private var origins: [UInt64: String] = [:]
    private(set) var needingOrigin: Set<UInt64> = []
    /// Where each late line's id is in `lateLines`.
    private var late: [UInt64: Int32] = [:]
    /// For each month, the greatest end of its file's lines seen so far (read, then
    /// appended) that end within it: a line of that month that ends before it is late.
    /// The month asked about last is in `lastMonth` instead, not here.
    private var greatestEnds: [DeviceMonth: Int64] = [:]
    /// The month `isLate` was asked about last, its bounds and greatest end: the build reads
    /// a month's lines in a row, and appends mostly go to the current month (no hash a line).
    private var lastMonth: (month: DeviceMonth, start: Int64, end: Int64, greatestEnd: Int64)?

    /// A month file of one device: lines are late among those of their own file only.
    struct DeviceMonth: Hashable, Sendable {
        var device: String
        var month: HistoryMonth
    }
    /// The ids of `countingRecord` and `late`, the lines `History` passes over where they
    /// lie: what a stream asks of every line.
    private(set) var movedIDs: Set<UInt64> = []
    /// A bit for each value of an id's low 16 bits that some id in `movedIDs` has (or had):
    /// a line whose bit is clear is not moved, told by one load instead of a hash (ids are
    /// random, so with 10,000 corrections seven lines in eight are told so). Bits are never
    /// cleared: one left set only sends a line on to `movedIDs`.
    private var movedFilter = [UInt64](repeating: 0, count: 1 << 10)
    /// Correction lines that were damaged (not JSON, naming no id): skipped.
    var damagedLines = 0

    /// A month file as the index learnt it: which file (device and inode), its change time
    /// and its size then. Every line in those bytes was learnt, in file order: the build read
    /// them, or this daemon appended them. The change time tells an edit in place that kept
    /// the size (an editor that rewrites the same inode, one digit fixed), and a file made
    /// again on a reused inode number.
    struct LearntFile: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var changeTime: Int64
        var size: Int64

        init(_ status: FileStatus, size: Int64) {
            device = status.device
            inode = status.inode
            changeTime = status.changeTime
            self.size = size
        }

        /// Whether `status` is this file, unchanged since it was learnt.
        func isFile(_ status: FileStatus) -> Bool {
            device == status.device && inode == status.inode && changeTime == status.changeTime
        }
    }

    /// For each of this device's months, the file whose lines the index learnt (`hasLearnt`;
    /// the other devices' are `PeerDevices`' own, `PeerDevices.LearntMonth`).
    private var learntFiles: [HistoryMonth: LearntFile] = [:]

    init() {}

    /// Adds a record read from, or appended to, `device`'s files at `place`.
    mutating func add(_ correction: HistoryCorrection, device: String, place: Int, isOwn: Bool) {
        // Ids were checked as 16 hex digits when parsed, or made so.
        guard let record = Self.number(correction.record) else { return }
        switch correction.change {
        case .form(let operation, let id, let interval):
            guard placeOfRecord[record] == nil, let intervalID = Self.number(id) else { return }  // The same record twice: once.
            var kept = interval
            kept?.id = ""
            let at = Int32(records.count)
            if operation != .track, origins[intervalID] == nil { needingOrigin.insert(intervalID) }
            records.append(Record(
                record: record, madeMs: correction.madeMs, device: device, place: place, operation: operation,
                intervalID: intervalID, interval: kept, previous: latestOfInterval[intervalID] ?? -1, undone: undone.contains(record)
            ))
            placeOfRecord[record] = at
            latestOfInterval[intervalID] = at
            if isOwn {
                // In its files' order (month, then place), the same whether appended or read at
                // a restart: a record dated in a later month (one ahead of the clock, or stamped
                // after its interval's counting record: `HistoryJournal.newCorrection`) lies in
                // that month's file, after those of the months before.
                let month = HistoryMonth(epochMilliseconds: correction.madeMs)
                let after = ownRecords.lastIndex { HistoryMonth(epochMilliseconds: records[Int($0)].madeMs) <= month }.map { $0 + 1 } ?? 0
                ownRecords.insert(at, at: after)
            }
            recount(intervalID)
        case .undo(let taken):
            guard let taken = Self.number(taken), undone.insert(taken).inserted else { return }
            if let at = placeOfRecord[taken] {
                records[Int(at)].undone = true
                recount(records[Int(at)].intervalID)
            }
        }
    }

    /// Sets which record counts for `id`.
    private mutating func recount(_ id: UInt64) {
        var best: Int32?
        var at = latestOfInterval[id] ?? -1
        while at >= 0 {
            let record = records[Int(at)]
            if !record.undone, best.map({ records[Int($0)].order < record.order }) ?? true { best = at }
            at = record.previous
        }
        countingRecord[id] = best
        updateMoved(id)
    }

    private mutating func updateMoved(_ id: UInt64) {
        if countingRecord[id] == nil, late[id] == nil {
            movedIDs.remove(id)
        } else {
            movedIDs.insert(id)
            movedFilter[Int(id >> 6 & 0x3FF)] |= 1 << (id & 63)
        }
    }

    /// The record that counts for `id` now, if a record sets its form.
    func counting(_ id: String) -> Form? {
        guard let number = Self.number(id), let at = countingRecord[number] else { return nil }
        return records[Int(at)].form
    }

    /// Learns the end of the next interval line of `month`'s file, in file order (read or
    /// appended; only lines `History` accepts); true when it is late: it ends outside the
    /// month (then it teaches nothing), or before a line of the month written before it.
    mutating func isLate(end: Int64, month: HistoryMonth, device: String) -> Bool {
        if lastMonth?.month.month != month || lastMonth?.month.device != device {
            if let lastMonth { greatestEnds[lastMonth.month] = lastMonth.greatestEnd }
            let key = DeviceMonth(device: device, month: month)
            lastMonth = (key, month.startMilliseconds, month.endMilliseconds, greatestEnds[key] ?? .min)
        }
        guard var current = lastMonth, end >= current.start, end < current.end else { return true }
        if end < current.greatestEnd { return true }
        current.greatestEnd = end
        lastMonth = current
        return false
    }

    /// Learnt `month`'s file, `status`, up to `size` bytes: read whole at the build, or
    /// created empty by this daemon (`size` 0).
    mutating func learnt(_ month: HistoryMonth, file status: FileStatus, size: Int64) {
        learntFiles[month] = LearntFile(status, size: size)
    }

    /// This daemon appended `count` bytes (whole lines, each learnt) to `month`'s file, which
    /// was `before` when written to: learnt up to its new size if it was the file learnt, as
    /// large as learnt; otherwise (changed from outside, or a torn line cut off or ended
    /// before the append) not learnt any more.
    /// `after` is the file's status once the bytes are on disk (nil when it could not be read:
    /// then not learnt).
    mutating func appended(_ count: Int, to month: HistoryMonth, before: FileStatus, after: FileStatus?) {
        guard let file = learntFiles[month], file.isFile(before), file.size == before.size,
            let after, after.size == before.size + Int64(count)
        else {
            learntFiles[month] = nil
            return
        }
        learntFiles[month] = LearntFile(after, size: after.size)
    }

    /// Whether the index learnt a file of `month`: when this daemon makes that month's file
    /// (exclusively: none is there), that one was deleted, and the index's late lines and
    /// greatest end for the month are its. (Its inode number may well be the new file's: a
    /// freed inode is soon given again.)
    func hasLearntFile(_ month: HistoryMonth) -> Bool {
        learntFiles[month] != nil
    }

    /// Whether the index learnt every line of `month`'s file `status`, read up to `size`:
    /// the file learnt, up to exactly that size. Then its lines that are neither late nor
    /// corrected are in end order (what `HistoryStream.startOffset` relies on); otherwise a
    /// line may end anywhere.
    func hasLearnt(_ month: HistoryMonth, file status: FileStatus, size: Int64) -> Bool {
        guard let file = learntFiles[month] else { return false }
        return file.isFile(status) && file.size == size
    }

    /// The greatest end `device`'s `month` taught so far (`isLate`), if any: what a read of
    /// another device's month that fails midway puts back (`setGreatestEnd`), so that the
    /// lines it read are not late when read again.
    func greatestEnd(of month: HistoryMonth, device: String) -> Int64? {
        let key = DeviceMonth(device: device, month: month)
        if let lastMonth, lastMonth.month == key { return lastMonth.greatestEnd == .min ? nil : lastMonth.greatestEnd }
        return greatestEnds[key]
    }

    mutating func setGreatestEnd(_ end: Int64?, of month: HistoryMonth, device: String) {
        let key = DeviceMonth(device: device, month: month)
        if lastMonth?.month == key { lastMonth = nil }
        greatestEnds[key] = end
    }

    /// Adds an interval line of `device`'s files found late (`isLate`), as it is written.
    mutating func addLate(_ interval: Interval, device: String) {
        guard let id = Self.number(interval.id) else { return }
        if let at = late[id] {
            lateLines[Int(at)] = interval
            lateDevices[Int(at)] = device
        } else {
            late[id] = Int32(lateLines.count)
            lateLines.append(interval)
            lateDevices.append(device)
        }
        updateMoved(id)
    }

    /// Whether the line of interval `id` (read in `device`'s files) tells an origin the index
    /// wants: one whose form a record sets. Cheap for the other lines (`corrects(number:)`).
    mutating func learnOrigin(_ id: UInt64, device: String) {
        guard corrects(number: id) || needingOrigin.contains(id), origins[id] == nil else { return }
        origins[id] = device
        needingOrigin.remove(id)
    }

    /// The line of interval `id` was found in `device`'s files (a lookup by id).
    mutating func setOrigin(_ id: String, device: String) {
        guard let number = Self.number(id), origins[number] == nil else { return }
        origins[number] = device
        needingOrigin.remove(number)
    }

    /// The ids were looked for in every file read: those not found have no line there yet
    /// (a line arriving later is learnt as it is read).
    mutating func originsSought() {
        needingOrigin.removeAll()
    }

    /// The device an interval of the index is shown under: the one whose files hold its line;
    /// for one tracked, the device that tracked it; failing both, the one that corrected it.
    func device(ofInterval id: UInt64, record at: Int32) -> String {
        if let origin = origins[id] { return origin }
        var cursor = latestOfInterval[id] ?? -1
        var track: String?
        while cursor >= 0 {
            if records[Int(cursor)].operation == .track { track = records[Int(cursor)].device }
            cursor = records[Int(cursor)].previous
        }
        return track ?? records[Int(at)].device
    }

    /// Whether the line of `id` is not read where it lies: a record sets its form (its
    /// original line then does not count), or it was written late (it is merged in end order
    /// from `correctedIntervals`).
    func corrects(_ id: String) -> Bool {
        guard !movedIDs.isEmpty, let number = Self.number(id) else { return false }
        return movedIDs.contains(number)
    }

    /// `corrects` for an id already read as a number.
    func corrects(number: UInt64) -> Bool {
        guard !movedIDs.isEmpty, movedFilter[Int(number >> 6 & 0x3FF)] & (1 << (number & 63)) != 0 else { return false }
        return movedIDs.contains(number)
    }

    /// 16 lowercase hex digits as a number, read from the bytes (no `String` scanning).
    static func number(_ id: String) -> UInt64? {
        var value: UInt64 = 0
        var count = 0
        for byte in id.utf8 {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
            count += 1
        }
        return count == IntervalID.length ? value : nil
    }

    /// The interval ids whose lines `History` does not read where they lie, with their form:
    /// as a record sets it (nil: deleted), or, for a late line no record corrects, as written.
    var corrected: [String: Interval?] {
        var all: [String: Interval?] = [:]
        for (id, at) in countingRecord { all[IntervalIdentity.hex(id)] = records[Int(at)].form.interval }
        for (id, at) in late where countingRecord[id] == nil { all[IntervalIdentity.hex(id)] = lateLines[Int(at)] }
        return all
    }

    /// The intervals as the counting records make them (deleted ones left out), and the late
    /// lines that no record corrects: what `History` merges in end order.
    var correctedIntervals: [Interval] {
        var all: [Interval] = []
        all.reserveCapacity(countingRecord.count + lateLines.count)
        for at in countingRecord.values { if let interval = records[Int(at)].form.interval { all.append(interval) } }
        for (id, at) in late where countingRecord[id] == nil { all.append(lateLines[Int(at)]) }
        return all
    }

    /// A corrected or late interval, by where it is kept: what `History` merges, sorted by
    /// end, without a copy of each interval (10,000 of them were 1.7 MB per stream).
    struct Moved: Sendable {
        enum Kind: UInt8, Sendable {
            /// `slot` is a record's place in the index.
            case record
            /// `slot` is a late line's place in the index.
            case late
        }

        var end: Int64
        var start: Int64
        var kind: Kind
        var slot: Int32
        /// The interval's id, as a number: what orders two that end and start together.
        var id: UInt64 = 0
    }

    /// `correctedIntervals` that `matches` takes and, given `device`, whose device (the id of
    /// the one it is shown under) `device` takes, as `Moved`, sorted by end (then start, then
    /// id: the same order whatever order the records came in). The device is found only for
    /// an interval `matches` took, and only with `device`: finding it walks the interval's
    /// records and hashes its id, which for 10,000 records was most of a
    /// `log --since today`'s cost in the daemon. One that ends before `since` (which then
    /// cannot match) is passed over by its end alone, read in place: copying each interval
    /// out to `matches` (its strings retained and released) was most of what was left.
    func moved(matching matches: (Interval) -> Bool, since: Int64? = nil, device deviceMatches: ((String) -> Bool)? = nil) -> [Moved] {
        var all: [Moved] = []
        for (id, at) in countingRecord {
            if let since, let end = records[Int(at)].interval?.endMs, end < since { continue }
            guard let interval = records[Int(at)].interval, matches(interval) else { continue }
            if let deviceMatches, !deviceMatches(device(ofInterval: id, record: at)) { continue }
            all.append(Moved(end: interval.endMs ?? 0, start: interval.startMs, kind: .record, slot: at, id: id))
        }
        for (id, at) in late where countingRecord[id] == nil {
            if let since, let end = lateLines[Int(at)].endMs, end < since { continue }
            guard matches(lateLines[Int(at)]), deviceMatches?(lateDevices[Int(at)]) ?? true else { continue }
            let interval = lateLines[Int(at)]
            all.append(Moved(end: interval.endMs ?? 0, start: interval.startMs, kind: .late, slot: at, id: id))
        }
        all.sort { ($0.end, $0.start, $0.id) < ($1.end, $1.start, $1.id) }
        return all
    }

    /// The interval `moved` names, and the id of the device
    /// it is shown under.
    func interval(_ moved: Moved) -> (interval: Interval, device: String)? {
        switch moved.kind {
        case .record: records[Int(moved.slot)].form.interval.map { ($0, device(ofInterval: moved.id, record: moved.slot)) }
        case .late: (lateLines[Int(moved.slot)], lateDevices[Int(moved.slot)])
        }
    }

    /// The id of the device `id`'s interval is shown under, when the index sets its form.
    func device(ofCorrected id: String) -> String? {
        guard let number = Self.number(id) else { return nil }
        if let at = countingRecord[number] { return device(ofInterval: number, record: at) }
        if let at = late[number] { return lateDevices[Int(at)] }
        return nil
    }

    /// This device's latest track, amend or delete not yet undone: what `Undo` takes back.
    func latestUndoable() -> (record: String, form: Form)? {
        for at in ownRecords.reversed() where !records[Int(at)].undone {
            return (IntervalIdentity.hex(records[Int(at)].record), records[Int(at)].form)
        }
        return nil
    }

    var count: Int { records.count + undone.count }

    /// How many interval lines it holds as late (what its size grows with, besides records).
    var lateLineCount: Int { lateLines.count }
}
