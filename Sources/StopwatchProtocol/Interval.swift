import Varlink

/// One counting interval, as `History` replies carry it (SPEC §3): from a start or resume to
/// the stop, toggle, countdown or remove that ended it.
public struct Interval: Equatable, Sendable {
    /// 16 lowercase hex digits, unique across devices, kept through corrections (SPEC §3).
    /// Empty only where none is known yet (an interval still counting, not yet in a journal).
    public var id: String
    /// The stopwatch it was counted on.
    public var name: String
    /// Wall-clock time of the start, in milliseconds since the Unix epoch.
    public var startMs: Int64
    /// Wall-clock time of the end; nil while the interval is still counting.
    public var endMs: Int64?
    /// Time counted in the interval, in milliseconds (the boot clock: suspend included,
    /// clock steps not).
    public var elapsedMs: Int64
    /// What the time was for, if a note was given (1 to 1,024 scalars, no control character).
    public var note: String?
    /// The label of the cycle phase it was, if it was one.
    public var phase: String?
    /// The name of the device whose daemon recorded it (empty where none is known).
    public var device: String

    /// The latest time an interval may carry: the end of year 9999 (UTC). Anything later is
    /// damaged, and would cost a reader that walks its days billions of them.
    package static let latestMs: Int64 = 253_402_300_799_999

    public init(
        id: String = "", name: String, startMs: Int64, endMs: Int64?, elapsedMs: Int64, note: String? = nil, phase: String? = nil,
        device: String = ""
    ) {
        self.id = id
        self.phase = phase
        self.note = note
        self.device = device
        self.name = name
        self.startMs = startMs
        self.endMs = endMs
        self.elapsedMs = elapsedMs
    }

    package var json: JSONValue {
        var object: JSONObject = [
            "id": .string(id),
            "name": .string(name),
            "start_ms": .int(startMs),
            "elapsed_ms": .int(elapsedMs),
        ]
        if let endMs { object["end_ms"] = .int(endMs) }
        if let note { object["note"] = .string(note) }
        if let phase { object["phase"] = .string(phase) }
        object["device"] = .string(device)
        return .object(object)
    }

    /// Reads an `Interval` object; throws when a field is missing, of the wrong type, or
    /// out of range (a negative time, an end before the start).
    package init(json: JSONValue) throws(MalformedMessage) {
        guard case .object(let object) = json else { throw MalformedMessage("an Interval is not an object") }
        guard case .string(let name)? = object["name"] else { throw MalformedMessage("Interval.name is not a string") }
        guard case .int(let startMs)? = object["start_ms"], (0...Self.latestMs).contains(startMs) else {
            throw MalformedMessage("Interval.start_ms is not a time from the epoch to the year 9999")
        }
        var endMs: Int64?
        switch object["end_ms"] {
        case nil, .null?: break
        case .int(let value)? where (startMs...Self.latestMs).contains(value): endMs = value
        default: throw MalformedMessage("Interval.end_ms is not a time from start_ms to the year 9999")
        }
        guard case .int(let elapsedMs)? = object["elapsed_ms"], (0...Self.latestMs).contains(elapsedMs) else {
            throw MalformedMessage("Interval.elapsed_ms is not a duration")
        }
        // Absent from daemons before ids (and from the history's lines of that release).
        var id = ""
        switch object["id"] {
        case nil, .null?: break
        case .string(let value)?: id = value
        default: throw MalformedMessage("Interval.id is not a string")
        }
        var note: String?
        switch object["note"] {
        case nil, .null?: break
        case .string(let value)?: note = value
        default: throw MalformedMessage("Interval.note is not a string")
        }
        var phase: String?
        switch object["phase"] {
        case nil, .null?: break
        case .string(let value)?: phase = value
        default: throw MalformedMessage("Interval.phase is not a string")
        }
        var device = ""
        switch object["device"] {
        case nil, .null?: break
        case .string(let value)?: device = value
        default: throw MalformedMessage("Interval.device is not a string")
        }
        self.init(id: id, name: name, startMs: startMs, endMs: endMs, elapsedMs: elapsedMs, note: note, phase: phase, device: device)
    }
}
