import StopwatchProtocol
import Varlink

/// One line of the outbox (`outbox.jsonl` in the state directory), a JSON object:
///
///     {"run":12,"at_ms":1732600000123,"late_ms":0,"update":{"stopwatch":{…},"event":"expired"}}
///     {"run":13,"at_ms":1732600000456,"late_ms":0,"update":{…,"event":"stop"},"ended_note":"the report"}
///     {"told":"tea","boot_id":"…","instant_ns":123456789000}
///     {"started":12}
///
/// - `run`: an event whose hooks are still to run, numbered in the order written; `update`
///   is the `Watch` reply a hook reads, `at_ms` the wall-clock instant of the event (for an
///   expiry, the instant it fell), `late_ms` how late it was told, `ended_note` (absent when
///   none) the note of the counting interval the event ended.
/// - `told`: an expiry told (watchers and hooks) before its stopwatch's file says so.
/// - `started`: the hooks of every run numbered up to this one have been started (or
///   dropped, logged).
///
/// Read back at start, a line is checked whole: anything else is a bad line, skipped.
enum OutboxLine: Equatable {
    case run(OutboxRun)
    case told(ToldExpiry, bootID: String)
    case started(through: UInt64)

    /// Run numbers stay below this, so that no arithmetic on one read from disk overflows.
    static let maximumNumber: UInt64 = 1 << 53

    /// The line, with its newline.
    var bytes: [UInt8] {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return bytes
    }

    func encode(into bytes: inout [UInt8]) {
        var object: JSONObject
        switch self {
        case .run(let run):
            object = [
                "run": .int(Int64(run.number)),
                "at_ms": .int(run.atMs),
                "late_ms": .int(run.lateMs),
                "update": run.update.json,
            ]
            if let endedNote = run.endedNote { object["ended_note"] = .string(endedNote) }
        case .told(let expiry, let bootID):
            object = ["told": .string(expiry.name), "boot_id": .string(bootID), "instant_ns": .int(expiry.instant.nanoseconds)]
        case .started(let through):
            object = ["started": .int(Int64(through))]
        }
        JSONValue.object(object).write(into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// The line `bytes` holds (without its newline).
    init(decoding bytes: ArraySlice<UInt8>) throws(MalformedMessage) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(bytes))
        } catch {
            throw MalformedMessage("not JSON: \(error)")
        }
        guard case .object(let object) = value else { throw MalformedMessage("not a JSON object") }
        if let number = object["run"] {
            let number = try Self.number(number, "run")
            guard case .int(let atMs)? = object["at_ms"], atMs >= 0 else { throw MalformedMessage("a run without its at_ms") }
            var lateMs: Int64 = 0
            switch object["late_ms"] {
            case nil, .null?: break
            case .int(let late)? where late >= 0: lateMs = late
            default: throw MalformedMessage("late_ms is not a duration")
            }
            guard case .object(let parameters)? = object["update"] else { throw MalformedMessage("a run without its update") }
            let update = try WatchUpdate(json: parameters)
            // What reaches a hook's environment: a name as the daemon accepts it, nothing else.
            guard StopwatchName.isValid(update.stopwatch.name) else { throw MalformedMessage("a run of an invalid name") }
            var endedNote: String?
            switch object["ended_note"] {
            case nil, .null?: break
            case .string(let note)? where IntervalNote.isValid(note): endedNote = note
            default: throw MalformedMessage("ended_note is not a valid note")
            }
            self = .run(OutboxRun(number: number, atMs: atMs, lateMs: lateMs, update: update, endedNote: endedNote))
        } else if let told = object["told"] {
            guard case .string(let name) = told, StopwatchName.isValid(name) else { throw MalformedMessage("told is not a name") }
            guard case .string(let bootID)? = object["boot_id"], !bootID.isEmpty, bootID.utf8.count <= 64 else {
                throw MalformedMessage("told without its boot_id")
            }
            guard case .int(let instant)? = object["instant_ns"] else { throw MalformedMessage("told without its instant_ns") }
            self = .told(ToldExpiry(name: name, instant: .nanoseconds(instant)), bootID: bootID)
        } else if let started = object["started"] {
            self = .started(through: try Self.number(started, "started"))
        } else {
            throw MalformedMessage("neither a run, a told expiry nor a started mark")
        }
    }

    private static func number(_ value: JSONValue, _ key: String) throws(MalformedMessage) -> UInt64 {
        guard case .int(let number) = value, number >= 0, UInt64(number) < maximumNumber else {
            throw MalformedMessage("\(key) is not a run number")
        }
        return UInt64(number)
    }
}

/// An event waiting for its hooks, as the outbox keeps it.
struct OutboxRun: Equatable {
    /// Its place in the order of runs: 1, 2, … (a `started` line names the last begun).
    var number: UInt64
    /// When the event happened, on the wall clock, in milliseconds since the epoch.
    var atMs: Int64
    /// How late it was told when it happened (an expiry's), in milliseconds.
    var lateMs: Int64
    var update: WatchUpdate
    /// The note of the counting interval the event ended, if any (`StopwatchEvent.endedNote`).
    var endedNote: String?
}
