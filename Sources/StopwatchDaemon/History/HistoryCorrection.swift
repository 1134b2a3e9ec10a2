import StopwatchProtocol
import Varlink

/// One correction line of the journal (docs/HISTORY.md): a `track`, `amend` or `delete`
/// naming the interval id it gives a form (the whole resulting interval for the first two),
/// or an `undo` naming the record it takes back. Each has its own record id (`rec`, 16 hex
/// digits) and the wall-clock time it was made (`made_ms`), whose UTC month is its file's.
///
/// Package-visible: swbench writes corrections in this format and parses them as its baseline.
package struct HistoryCorrection: Equatable, Sendable {
    package enum Operation: String, Sendable {
        case track, amend, delete
    }

    package enum Change: Equatable, Sendable {
        /// `track` or `amend` with the interval as it now is; `delete` with nil.
        case form(Operation, id: String, interval: Interval?)
        /// Takes back the record `rec`.
        case undo(record: String)
    }

    package var record: String
    package var madeMs: Int64
    package var change: Change

    package init(record: String, madeMs: Int64, change: Change) {
        self.record = record
        self.madeMs = madeMs
        self.change = change
    }

    /// The interval id a track, amend or delete names; nil for an undo.
    var intervalID: String? {
        if case .form(_, let id, _) = change { id } else { nil }
    }

    /// The line, newline included.
    package func encode(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"op":""#.utf8)
        switch change {
        case .form(let operation, let id, let interval):
            bytes.append(contentsOf: operation.rawValue.utf8)
            appendHeader(into: &bytes)
            bytes.append(contentsOf: #","id":""#.utf8)
            bytes.append(contentsOf: id.utf8)
            bytes.append(UInt8(ascii: "\""))
            if let interval {
                // The interval's own object, its opening brace and id left out.
                var object: [UInt8] = []
                HistoryLine.encodeObject(Interval(
                    name: interval.name, startMs: interval.startMs, endMs: interval.endMs, elapsedMs: interval.elapsedMs,
                    note: interval.note, phase: interval.phase
                ), device: nil, into: &object)
                bytes.append(UInt8(ascii: ","))
                bytes.append(contentsOf: object.dropFirst())
            } else {
                bytes.append(UInt8(ascii: "}"))
            }
        case .undo(let undone):
            bytes.append(contentsOf: "undo".utf8)
            appendHeader(into: &bytes)
            bytes.append(contentsOf: #","undoes":""#.utf8)
            bytes.append(contentsOf: undone.utf8)
            bytes.append(contentsOf: #""}"#.utf8)
        }
        bytes.append(UInt8(ascii: "\n"))
    }

    private func appendHeader(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"","rec":""#.utf8)
        bytes.append(contentsOf: record.utf8)
        bytes.append(contentsOf: #"","made_ms":"#.utf8)
        JSONValue.writeInteger(madeMs, into: &bytes)
    }

    /// The correction a line (without its newline) holds, or nil when it is damaged: not
    /// JSON, an unknown `op`, a `rec`, `id` or `undoes` that is not 16 hex digits, a time
    /// out of range, or an interval that would not be one.
    package static func parse(_ line: UnsafeRawBufferPointer) -> HistoryCorrection? {
        guard let json = try? JSONParser.parse(Array(line)), case .object(let object) = json,
            case .string(let op)? = object["op"],
            case .string(let record)? = object["rec"], IntervalID.isValid(record),
            case .int(let madeMs)? = object["made_ms"], (0...Interval.latestMs).contains(madeMs)
        else { return nil }
        if op == "undo" {
            guard case .string(let undone)? = object["undoes"], IntervalID.isValid(undone) else { return nil }
            return HistoryCorrection(record: record, madeMs: madeMs, change: .undo(record: undone))
        }
        guard let operation = Operation(rawValue: op), case .string(let id)? = object["id"], IntervalID.isValid(id) else { return nil }
        guard operation != .delete else {
            return HistoryCorrection(record: record, madeMs: madeMs, change: .form(.delete, id: id, interval: nil))
        }
        guard var interval = try? Interval(json: json), HistoryLine.isInRange(interval) else { return nil }
        guard HistoryLine.isValidText(of: interval) else { return nil }
        interval.id = id
        interval.device = ""
        return HistoryCorrection(record: record, madeMs: madeMs, change: .form(operation, id: id, interval: interval))
    }
}
