import StopWatchCore
import StopwatchProtocol
import Varlink

/// A stopwatch's transitions since its snapshot file, one line each: the record as the
/// snapshot holds it (`StopwatchRecord`), but of its laps only those from `laps_from` on, and
/// a sequence number (`journal_seq`) one above the line before. A transition appends its line
/// and `fdatasync`s it: one flush, where replacing the snapshot costs two and writes every
/// lap. The snapshot records the sequence number it holds; lines at or below it are older
/// than it (a crash between rewriting the snapshot and emptying the journal) and skipped.
///
/// This type is the format and its replay, without files: the store appends and truncates,
/// the reader replays.
enum StopwatchJournal {
    static let sequenceKey = "journal_seq"
    static let idKey = "journal_id"
    /// Sequence numbers stay below this, on disk and in memory: one from a file can never
    /// overflow when the next is taken (2^62 transitions is not reached in any lifetime).
    static let sequenceBound: Int64 = 1 << 62
    static let lapsFromKey = "laps_from"

    /// `record`'s line for sequence number `sequence`, holding its laps from `lapsFrom` on,
    /// its newline included.
    static func line(_ record: StopwatchRecord, sequence: Int64, lapsFrom: Int) -> [UInt8] {
        precondition(lapsFrom >= 0 && lapsFrom <= record.laps.count, "laps_from beyond the laps")
        var tail = record
        tail.laps = Array(record.laps[lapsFrom...])
        guard case .object(var object) = tail.json else { preconditionFailure("a record is an object") }
        object[sequenceKey] = .int(sequence)
        object[lapsFromKey] = .int(Int64(lapsFrom))
        var bytes = JSONValue.object(object).serialized
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// What replaying `journal` over `snapshot` (which holds sequence number `snapshotSequence`)
    /// gives: the record after the last good line, its sequence number, and how many bytes of
    /// `journal` those lines fill. The rest is cut: a torn last line (`problem` names it and
    /// `isTornTail` is set), or from the first line that is not the next transition of this
    /// stopwatch, or whose record is out of range at `now` (`problem` names it).
    struct Replay: Equatable {
        var record: StopwatchRecord
        var sequence: Int64
        var goodBytes: Int
        var problem: String?
        var isTornTail = false
    }

    static func replay(
        _ journal: [UInt8], over snapshot: StopwatchRecord, snapshotSequence: Int64, maximumLaps: Int, at now: ClockReading
    ) -> Replay {
        var replay = Replay(record: snapshot, sequence: snapshotSequence, goodBytes: 0, problem: nil)
        var start = 0
        while start < journal.count {
            guard let newline = journal[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                replay.problem = "a torn last line (\(journal.count - start) bytes), cut"
                replay.isTornTail = true
                return replay
            }
            switch apply(journal[start..<newline], to: &replay, snapshotSequence: snapshotSequence, maximumLaps: maximumLaps, at: now) {
            case .skipped, .applied: break
            case .refused(let reason):
                replay.problem = "line at byte \(start): \(reason); it and what follows are cut"
                return replay
            }
            start = newline + 1
            replay.goodBytes = start
        }
        return replay
    }

    private enum Outcome {
        case skipped
        case applied
        case refused(String)
    }

    /// Applies one line to `replay` (its record changed only when `.applied`).
    private static func apply(
        _ bytes: ArraySlice<UInt8>, to replay: inout Replay, snapshotSequence: Int64, maximumLaps: Int, at now: ClockReading
    ) -> Outcome {
        guard let json = try? JSONParser.parse(Array(bytes)), case .object(var object) = json else { return .refused("not a JSON object") }
        guard case .int(let sequence)? = object[sequenceKey] else { return .refused("no \(sequenceKey)") }
        guard sequence > 0, sequence < sequenceBound else { return .refused("\(sequenceKey) \(sequence) out of range") }
        // A snapshot of no number (0: written before journals, or by an earlier release after
        // them) holds what any line says or more: none is replayed over it.
        guard snapshotSequence > 0 else { return .refused("a line over a snapshot without \(sequenceKey)") }
        // Of another journal (the one before the snapshot, or a removed stopwatch's of this
        // name), before any line applied: older than the snapshot. After one: foreign.
        let lineID: String? = if case .string(let id)? = object[idKey] { id } else { nil }
        guard let snapshotID = replay.record.journalID, lineID == snapshotID else {
            if replay.sequence == snapshotSequence { return .skipped }
            return .refused("a line of another journal")
        }
        // Older than the snapshot, before any line applied: the snapshot holds it already.
        if replay.sequence == snapshotSequence, sequence <= snapshotSequence { return .skipped }
        guard sequence == replay.sequence + 1 else { return .refused("\(sequenceKey) \(sequence) where \(replay.sequence + 1) is next") }
        guard case .int(let lapsFrom)? = object[lapsFromKey], lapsFrom >= 0, lapsFrom <= Int64(replay.record.laps.count) else {
            return .refused("no \(lapsFromKey) within the \(replay.record.laps.count) laps held")
        }
        // The line's own sequence number is not the record's field of that name.
        object[sequenceKey] = nil
        object[lapsFromKey] = nil
        var tail: StopwatchRecord
        do {
            tail = try StopwatchRecord(json: .object(object))
            // As a file's record is checked (its laps are not part of it): a line out of range
            // ends the replay there, and the lines before it stand.
            try tail.checkRange(at: now)
        } catch {
            return .refused(error.reason)
        }
        guard tail.name.utf8.elementsEqual(replay.record.name.utf8) else { return .refused("the line is of stopwatch '\(tail.name)'") }
        let keptLaps = Int(lapsFrom)
        // A stopwatch restored with more laps than a lowered --max-laps keeps its lines
        // (laps it already held, or none added); more than both is not this daemon's.
        let allowed = max(maximumLaps, replay.record.laps.count)
        guard keptLaps + tail.laps.count <= allowed else { return .refused("more than \(allowed) laps") }
        // One lap list through the whole replay: taken out of the record, so that it is the
        // array's only holder and is changed in place (a copy per line would cost a
        // journal of laps on 10,000 laps seconds at start).
        var laps = replay.record.laps
        replay.record.laps = []
        laps.removeSubrange(keptLaps...)
        laps.append(contentsOf: tail.laps)
        tail.laps = laps
        tail.journalSequence = sequence
        replay.record = tail
        replay.sequence = sequence
        return .applied
    }
}
