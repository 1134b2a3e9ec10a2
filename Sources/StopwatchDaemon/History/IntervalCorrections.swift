import StopwatchProtocol
import Varlink

/// `Track`, `Amend`, `Delete` and `Undo` (SPEC §3 "Corrections"): each checked, then
/// recorded as a correction line in the journal (on disk before the reply, or kept as the
/// journal keeps what it cannot write yet). Nothing a watcher sees changes: no stopwatch
/// does.
///
/// Not thread-safe: it belongs to the server's queue, as the journal it writes to.
struct IntervalCorrections {
    /// The longest interval Track and Amend make (SPEC §3: 366 days).
    static let maximumLengthMs: Int64 = 366 * 86_400_000

    let journal: HistoryJournal
    let wallClock: any WallClock
    /// The intervals counting now (with no end), each as [its start, now).
    let countingIntervals: () -> [Interval]

    func track(_ call: VarlinkCall) throws(VarlinkError) -> VarlinkAnswer {
        let name = try requiredName(call)
        guard let startMs = try time(call, "start_ms") else { throw .invalidParameter("start_ms") }
        guard let endMs = try time(call, "end_ms") else { throw .invalidParameter("end_ms") }
        let note = try self.note(call)
        let interval = Interval(
            id: IntervalIdentity.random(), name: name, startMs: startMs, endMs: endMs, elapsedMs: endMs &- startMs, note: note
        )
        try check(interval, excluding: nil)
        try journal.append(journal.newCorrection(.form(.track, id: interval.id, interval: interval)))
        return reply(interval)
    }

    func amend(_ call: VarlinkCall) throws(VarlinkError) -> VarlinkAnswer {
        let (id, current) = try existing(call)
        var amended = current
        switch call.parameters["name"] {
        case nil, .null?: break
        default: amended.name = try requiredName(call)
        }
        if let start = try time(call, "start_ms") { amended.startMs = start }
        if let end = try time(call, "end_ms") { amended.endMs = end }
        // The one place an empty note means something: "" removes it (SPEC §3; null: unchanged).
        if case .string("")? = call.parameters["note"] {
            amended.note = nil
        } else if let note = try note(call) {
            amended.note = note
        }
        let timesChanged = amended.startMs != current.startMs || amended.endMs != current.endMs
        if timesChanged { amended.elapsedMs = (amended.endMs ?? amended.startMs) &- amended.startMs }
        if timesChanged || amended.name != current.name {
            try check(amended, excluding: id)
        }
        // Nothing to change: nothing written (an undo step that would do nothing).
        guard amended != current else { return reply(current) }
        try journal.append(journal.newCorrection(.form(.amend, id: id, interval: amended)))
        return reply(amended)
    }

    func delete(_ call: VarlinkCall) throws(VarlinkError) -> VarlinkAnswer {
        let (id, current) = try existing(call)
        let correction = journal.newCorrection(.form(.delete, id: id, interval: nil))
        try journal.append(correction)
        journal.deletedIntervals[correction.record] = current
        return reply(current)
    }

    /// Takes back this device's latest correction not undone. The reply is worked out
    /// before the record is written (reading a month may fail: then nothing is undone), so
    /// that a reply, and only a reply, means an undo on disk.
    func undo(_ call: VarlinkCall) throws(VarlinkError) -> VarlinkAnswer {
        let index = try journal.correctionIndex()
        guard let (record, form) = index.latestUndoable() else { throw .nothingToUndo }
        let correction = journal.newCorrection(.undo(record: record))
        var afterwards = index
        afterwards.add(correction, device: journal.deviceID, place: Int.max, isOwn: true)
        // The interval as the record made it (a delete's: as the Delete replied with it, while
        // this daemon remembers), should nothing else give it a form after.
        let before = form.interval ?? journal.deletedIntervals[record]
        let id = form.intervalID
        let after: Interval?
        if let counting = afterwards.counting(id) {
            after = counting.interval ?? before
        } else {
            // No record sets its form now: its original line, or, tracked, the interval it was.
            after = try journal.originalInterval(id) ?? before
        }
        // Asked before the undo is in the index: it may leave no record of the interval.
        let device = journal.deviceName(ofInterval: id)
        try journal.append(correction)
        // Only when nothing is known of it any more (a delete made before a restart, undone
        // after its line was pruned): the id alone.
        var interval = after ?? Interval(id: id, name: "", startMs: 0, endMs: 0, elapsedMs: 0)
        interval.id = id
        interval.device = device
        return .reply(["interval": interval.json, "undone": .string(form.operation.rawValue)])
    }

    // MARK: Checks

    /// The interval the call's `id` names, as it is now: refused when the id is not one, names
    /// none or several, is deleted, or is the interval counting now.
    private func existing(_ call: VarlinkCall) throws(VarlinkError) -> (id: String, interval: Interval) {
        guard case .string(let prefix)? = call.parameters["id"], IntervalID.isValidPrefix(prefix) else {
            throw .invalidParameter("id")
        }
        let counting = countingIntervals().filter { !$0.id.isEmpty && $0.id.hasPrefix(prefix) }
        var lookup = try journal.lookUp(prefix)
        // The counting interval is refused as such only when the prefix names it alone;
        // otherwise it is one of the several the prefix names.
        if !counting.isEmpty {
            let countingIDs = counting.map { "\($0.id) (counting)" }
            switch lookup {
            case .none where counting.count == 1:
                throw .invalidInterval("\(counting[0].id) of \(counting[0].name) is still counting: stop it first (at a time in the past if need be)")
            case .none: lookup = .ambiguous(countingIDs)
            case .found(let id, let interval): lookup = .ambiguous([interval == nil ? "\(id) (deleted)" : id] + countingIDs)
            case .ambiguous(let ids): lookup = .ambiguous(ids + countingIDs)
            }
        }
        switch lookup {
        case .none:
            throw .noSuchInterval(prefix)
        case .ambiguous(let ids):
            let shown = ids.prefix(10).joined(separator: ", ")
            throw .invalidInterval("\(prefix) is the start of \(ids.count) interval ids (\(shown)\(ids.count > 10 ? ", …" : "")): give more digits")
        case .found(let id, nil):
            throw .invalidInterval("\(id) was deleted: undo the delete to correct it")
        case .found(let id, let interval?):
            return (id, interval)
        }
    }

    /// Refuses an interval Track or Amend would make that is not one: its end at or before
    /// its start, in the future, longer than 366 days, or overlapping another ended interval
    /// of its name or the one counting now.
    private func check(_ interval: Interval, excluding id: String?) throws(VarlinkError) {
        let now = wallClock.nowMilliseconds()
        let start = interval.startMs
        guard let end = interval.endMs else { throw .invalidParameter("end_ms") }
        guard start >= 0 else { throw .invalidInterval("the start \(start) is before 1970: give a time from \(UTCTime.text(0)) on") }
        guard end > start else {
            throw .invalidInterval("the end (\(UTCTime.text(end))) must be after the start (\(UTCTime.text(start)))")
        }
        guard end <= now else {
            throw .invalidInterval("the end (\(UTCTime.text(end))) is in the future: it may be at most now (\(UTCTime.text(now)))")
        }
        guard end - start <= Self.maximumLengthMs else {
            throw .invalidInterval("\(UTCTime.text(start)) to \(UTCTime.text(end)) is longer than 366 days, the most an interval may be")
        }
        if let counting = countingIntervals().first(where: { HistoryQuery.sameName($0.name, interval.name) }), counting.startMs < end {
            throw .invalidInterval(
                "\(interval.name) counts from \(UTCTime.text(counting.startMs)): an interval of it must end by then, not at \(UTCTime.text(end))"
            )
        }
        if let other = try journal.overlapping(name: interval.name, startMs: start, endMs: end, excluding: id) {
            throw .invalidInterval(
                "it would overlap \(other.id) of \(other.name), \(UTCTime.text(other.startMs)) to \(UTCTime.text(other.endMs ?? other.startMs)): intervals of one name may not overlap"
            )
        }
    }

    private func requiredName(_ call: VarlinkCall) throws(VarlinkError) -> String {
        guard case .string(let name)? = call.parameters["name"] else { throw .invalidParameter("name") }
        guard StopwatchName.isValid(name) else { throw .invalidName(name) }
        return name
    }

    private func time(_ call: VarlinkCall, _ key: String) throws(VarlinkError) -> Int64? {
        switch call.parameters[key] {
        case nil, .null?: return nil
        case .int(let value)? where (0...Interval.latestMs).contains(value): return value
        case .int(let value)?: throw .invalidInterval("\(key) \(value) is out of range: give a time from \(UTCTime.text(0)) to the year 9999")
        default: throw .invalidParameter(key)
        }
    }

    private func note(_ call: VarlinkCall) throws(VarlinkError) -> String? {
        switch call.parameters["note"] {
        case nil, .null?: return nil
        case .string(let note)? where IntervalNote.isValid(note): return note
        default: throw .invalidParameter("note")
        }
    }

    private func reply(_ interval: Interval) -> VarlinkAnswer {
        var interval = interval
        // Another device's interval (found by `lookUp`) keeps its device's name.
        if interval.device.isEmpty { interval.device = journal.deviceName }
        return .reply(["interval": interval.json])
    }
}
