import StopwatchProtocol

/// What the journal's correction records say, in memory: for each interval id corrected,
/// the form that counts now (SPEC §4 "History across devices", docs/HISTORY.md).
///
/// The rules: for each interval id, the record that counts is the latest not-undone
/// `track`, `amend` or `delete` by (`made_ms`, device id, its place in that device's files);
/// none, and the interval reads as its original line (or, tracked, is not there). A `delete`
/// that counts removes it. An `undo` takes back the record it names, whenever it is read.
///
/// Its size is the number of corrections, never the number of intervals: interval lines are
/// not in it. Built by the journal from the correction lines of the months, then kept
/// current by the journal's own appends.
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
    /// This device's form records in its files' order (by month, then by place in the month's
    /// file), the same whether added as appended or as read at a restart: `Undo` takes back
    /// the latest of them not yet undone.
    private var ownRecords: [(month: HistoryMonth, record: String)] = []
    /// For each interval id whose form a record sets, the record that counts now.
    private(set) var counting: [String: Form] = [:]
    /// The ids of `counting` as numbers: what a `History` stream asks of every line, where
    /// a string key's comparisons cost a quarter of the daemon's time over a million lines.
    private var countingIDs: Set<UInt64> = []
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
            if isOwn {
                // Appended last but for a record dated in a later month (one ahead of the
                // clock, or stamped after it: `HistoryJournal.newCorrection`).
                let month = HistoryMonth(epochMilliseconds: correction.madeMs)
                let after = ownRecords.lastIndex { $0.month <= month }.map { $0 + 1 } ?? 0
                ownRecords.insert((month, correction.record), at: after)
            }
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
        if let number = UInt64(id, radix: 16) {
            if best == nil { countingIDs.remove(number) } else { countingIDs.insert(number) }
        }
    }

    /// Whether a record sets `id`'s form (its original line, if any, then does not count).
    func corrects(_ id: String) -> Bool {
        guard !countingIDs.isEmpty, let number = Self.number(id) else { return false }
        return countingIDs.contains(number)
    }

    /// 16 lowercase hex digits as a number, read from the bytes (no `String` scanning).
    private static func number(_ id: String) -> UInt64? {
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

    /// The interval ids a record sets the form of, with that form (nil: deleted).
    var corrected: [String: Interval?] {
        counting.mapValues { $0.interval }
    }

    /// The intervals as the counting records make them (deleted ones left out).
    var correctedIntervals: [Interval] {
        counting.values.compactMap(\.interval)
    }

    /// This device's latest track, amend or delete not yet undone: what `Undo` takes back.
    func latestUndoable() -> (record: String, form: Form)? {
        for (_, record) in ownRecords.reversed() where !undone.contains(record) {
            if let form = forms[record] { return (record, form) }
        }
        return nil
    }

    var count: Int { forms.count + undone.count }
}
