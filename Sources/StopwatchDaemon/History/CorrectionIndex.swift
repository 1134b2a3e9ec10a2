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
/// ends an interval before lines already written, and so does a wall clock set back): an
/// interval line whose end is below the greatest end of the lines before it in this device's
/// files. `History` reads lines in file order and must answer in end order, so it passes
/// over a late line where it lies and merges it in end order, as it does corrected ones.
///
/// Its size is the number of corrections and late lines, never the number of intervals:
/// other interval lines are not in it. Built by the journal from the months (the correction
/// lines parsed, the interval lines' ends read from their tails), then kept current by the
/// journal's own appends.
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

    /// A track, amend or delete.
    struct Form: Sendable {
        var order: Order
        var operation: HistoryCorrection.Operation
        var intervalID: String
        /// The interval as the record makes it (nil: deleted).
        var interval: Interval?
    }

    /// The form records, by their record id.
    private(set) var forms: [String: Form] = [:]
    /// The record ids of each corrected interval id.
    private var recordsOfInterval: [String: [String]] = [:]
    /// Records taken back by an undo.
    private(set) var undone: Set<String> = []
    /// This device's form records, in the order written: `Undo` takes back the latest of them
    /// not yet undone.
    private var ownRecords: [String] = []
    /// For each interval id whose form a record sets, the record that counts now.
    private(set) var counting: [String: Form] = [:]
    /// Interval lines written late (out of end order), as written, by id.
    private(set) var late: [String: Interval] = [:]
    /// The greatest end of the interval lines seen so far, in file order (read, then
    /// appended): a line that ends before it is late.
    private(set) var greatestEnd = Int64.min
    /// The ids of `counting` and `late` as numbers, the lines `History` passes over where they
    /// lie: what a stream asks of every line, where a string key's comparisons cost a quarter
    /// of the daemon's time over a million lines.
    private(set) var movedIDs: Set<UInt64> = []
    /// Correction lines that were damaged (not JSON, naming no id): skipped.
    var damagedLines = 0

    init() {}

    /// Adds a record read from, or appended to, `device`'s files at `place`.
    mutating func add(_ correction: HistoryCorrection, device: String, place: Int, isOwn: Bool) {
        let order = Order(madeMs: correction.madeMs, device: device, place: place)
        switch correction.change {
        case .form(let operation, let id, let interval):
            guard forms[correction.record] == nil else { return }  // The same record twice: once.
            forms[correction.record] = Form(order: order, operation: operation, intervalID: id, interval: interval)
            recordsOfInterval[id, default: []].append(correction.record)
            if isOwn { ownRecords.append(correction.record) }
            recount(id)
        case .undo(let record):
            guard undone.insert(record).inserted else { return }
            if let form = forms[record] { recount(form.intervalID) }
        }
    }

    /// Sets which record counts for `id`.
    private mutating func recount(_ id: String) {
        var best: Form?
        for record in recordsOfInterval[id] ?? [] where !undone.contains(record) {
            guard let form = forms[record] else { continue }
            if best.map({ $0.order < form.order }) ?? true { best = form }
        }
        counting[id] = best
        updateMoved(id)
    }

    private mutating func updateMoved(_ id: String) {
        guard let number = Self.number(id) else { return }
        if counting[id] == nil, late[id] == nil { movedIDs.remove(number) } else { movedIDs.insert(number) }
    }

    /// Learns the end of the next interval line in file order (read or appended); true when
    /// it is late: it ends before a line written before it.
    mutating func isLate(end: Int64) -> Bool {
        if end < greatestEnd { return true }
        greatestEnd = end
        return false
    }

    /// Adds an interval line found late (`isLate`), as it is written.
    mutating func addLate(_ interval: Interval) {
        late[interval.id] = interval
        updateMoved(interval.id)
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
        !movedIDs.isEmpty && movedIDs.contains(number)
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
        var all = counting.mapValues { $0.interval }
        for (id, interval) in late where all[id] == nil { all[id] = interval }
        return all
    }

    /// The intervals as the counting records make them (deleted ones left out), and the late
    /// lines that no record corrects: what `History` merges in end order.
    var correctedIntervals: [Interval] {
        counting.values.compactMap(\.interval) + late.values.filter { counting[$0.id] == nil }
    }

    /// This device's latest track, amend or delete not yet undone: what `Undo` takes back.
    func latestUndoable() -> (record: String, form: Form)? {
        for record in ownRecords.reversed() where !undone.contains(record) {
            if let form = forms[record] { return (record, form) }
        }
        return nil
    }

    var count: Int { forms.count + undone.count }
}
