import StopWatchCore
import Varlink

/// A stopwatch as the `io.stopwatchd` interface describes it: what replies carry.
public struct Stopwatch: Equatable, Sendable {
    /// The states as the wire and the daemon's state files spell them (`pause`, not
    /// `paused`): the one enum for them outside the core's `StopWatchState`.
    public enum State: String, Sendable, CaseIterable {
        case stopped, counting, pause
    }

    public var name: String
    public var state: State
    /// Elapsed time when the reply was made, in milliseconds.
    public var elapsedMs: Int64
    /// Split times since the last reset, in milliseconds, oldest first.
    public var lapsMs: [Int64]
    /// A countdown's length in milliseconds; nil for a plain stopwatch.
    public var targetMs: Int64?
    /// false: time in suspend is not counted (the awake clock). The wire leaves it out when true.
    public var countsSleep: Bool
    /// The note of the interval counting now, if one was given.
    public var note: String?

    public init(
        name: String, state: State, elapsedMs: Int64, lapsMs: [Int64] = [], targetMs: Int64? = nil, countsSleep: Bool = true,
        note: String? = nil
    ) {
        self.countsSleep = countsSleep
        self.note = note
        self.name = name
        self.state = state
        self.elapsedMs = elapsedMs
        self.lapsMs = lapsMs
        self.targetMs = targetMs
    }

    /// A countdown's time left: the target less the elapsed time, negative in overtime;
    /// nil for a plain stopwatch.
    ///
    /// Both numbers come from the daemon, so the difference is checked: where it does not
    /// fit in an `Int64` it is clamped by its sign, to `Int64.max` (an elapsed time far below
    /// the target) or `-Int64.max` (far above). It is never `Int64.min`, so `-remainingMs`
    /// (the overtime) and `abs(remainingMs)` cannot trap.
    public var remainingMs: Int64? {
        guard let targetMs else { return nil }
        let (remaining, overflow) = targetMs.subtractingReportingOverflow(elapsedMs)
        // On overflow the true difference has the sign of `targetMs`; without one, only
        // `Int64.min` itself is out of the symmetric range.
        if overflow { return targetMs >= 0 ? .max : -.max }
        return max(remaining, -.max)
    }

    /// The stopwatch `name` as `snapshot` has it at reading `now` of its own clock (the boot
    /// clock, or the awake one for a stopwatch that leaves sleep out).
    package init(name: String, snapshot: StopWatchSnapshot, at now: Duration) {
        self.name = name
        self.state = State(snapshot.state)
        self.elapsedMs = snapshot.elapsed(at: now).milliseconds
        self.lapsMs = snapshot.laps.map(\.milliseconds)
        self.targetMs = snapshot.target?.milliseconds
        self.countsSleep = snapshot.countsSleep
        self.note = snapshot.note
    }

    /// The stopwatch `name` as `snapshot` has it at `now`, read on its own clock.
    package init(name: String, snapshot: StopWatchSnapshot, at now: StopWatchInstant) {
        self.init(name: name, snapshot: snapshot, at: snapshot.reading(at: now))
    }

    package var json: JSONValue {
        var object: JSONObject = [
            "name": .string(name),
            "state": .string(state.rawValue),
            "elapsed_ms": .int(elapsedMs),
            "laps_ms": .array(lapsMs.map { .int($0) }),
        ]
        // Absent for a plain stopwatch, as the IDL's `?int` allows: replies of plain
        // stopwatches stay as they were.
        if let targetMs { object["target_ms"] = .int(targetMs) }
        // Only when false: replies of stopwatches that count sleep stay as they were.
        if !countsSleep { object["counts_sleep"] = .bool(false) }
        if let note { object["note"] = .string(note) }
        return .object(object)
    }

    /// Reads a `Stopwatch` object; throws when a field is missing or of the wrong type.
    package init(json: JSONValue) throws(MalformedMessage) {
        guard case .object(let object) = json else { throw MalformedMessage("a Stopwatch is not an object") }
        guard case .string(let name)? = object["name"] else { throw MalformedMessage("Stopwatch.name is not a string") }
        guard case .string(let stateName)? = object["state"], let state = State(rawValue: stateName) else {
            throw MalformedMessage("Stopwatch.state is not stopped, counting or pause")
        }
        guard case .int(let elapsedMs)? = object["elapsed_ms"] else {
            throw MalformedMessage("Stopwatch.elapsed_ms is not an integer")
        }
        guard case .array(let laps)? = object["laps_ms"] else { throw MalformedMessage("Stopwatch.laps_ms is not an array") }
        var lapsMs: [Int64] = []
        for lap in laps {
            guard case .int(let lapMs) = lap else { throw MalformedMessage("Stopwatch.laps_ms holds a non-integer") }
            lapsMs.append(lapMs)
        }
        var targetMs: Int64?
        switch object["target_ms"] {
        case nil, .null?: break
        case .int(let value)?: targetMs = value
        default: throw MalformedMessage("Stopwatch.target_ms is not an integer")
        }
        var countsSleep = true
        switch object["counts_sleep"] {
        case nil, .null?: break
        case .bool(let value)?: countsSleep = value
        default: throw MalformedMessage("Stopwatch.counts_sleep is not true or false")
        }
        var note: String?
        switch object["note"] {
        case nil, .null?: break
        case .string(let value)?: note = value
        default: throw MalformedMessage("Stopwatch.note is not a string")
        }
        self.init(
            name: name, state: state, elapsedMs: elapsedMs, lapsMs: lapsMs, targetMs: targetMs, countsSleep: countsSleep, note: note
        )
    }
}

extension Stopwatch.State {
    /// The state of the core's `state`, without its elapsed time. The only mapping between
    /// the two: replies and state files both use it.
    package init(_ state: StopWatchState) {
        self = switch state {
        case .stopped: .stopped
        case .counting: .counting
        case .pause: .pause
        }
    }
}
