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
    /// The cycle it runs, if any.
    public var cycle: Cycle?

    /// One phase of a cycle: a countdown with a label.
    public struct Phase: Equatable, Sendable {
        public var label: String
        public var targetMs: Int64

        public init(label: String, targetMs: Int64) {
            self.label = label
            self.targetMs = targetMs
        }
    }

    /// A sequence of countdowns run one after another, `rounds` times (nil: without end).
    public struct Cycle: Equatable, Sendable {
        public var phases: [Phase]
        /// The phase running now (0-based), and the round (1-based).
        public var phase: Int
        public var round: Int
        public var rounds: Int?
        /// true: the next phase starts at the instant the last one expires; false: at Next.
        public var auto: Bool

        public init(phases: [Phase], phase: Int = 0, round: Int = 1, rounds: Int? = nil, auto: Bool = true) {
            self.phases = phases
            self.phase = phase
            self.round = round
            self.rounds = rounds
            self.auto = auto
        }

        /// The label of the phase running now; nil when `phase` is not one of `phases` (a
        /// reply from a daemon that says so is shown, not trusted to index).
        public var currentLabel: String? {
            phases.indices.contains(phase) ? phases[phase].label : nil
        }
    }

    public init(
        name: String, state: State, elapsedMs: Int64, lapsMs: [Int64] = [], targetMs: Int64? = nil, countsSleep: Bool = true,
        note: String? = nil, cycle: Cycle? = nil
    ) {
        self.cycle = cycle
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
        self.cycle = snapshot.cycle.map { cycle in
            Cycle(
                phases: cycle.phases.map { Phase(label: $0.label, targetMs: $0.target.milliseconds) }, phase: cycle.phase,
                round: cycle.round, rounds: cycle.rounds, auto: cycle.auto
            )
        }
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
        if let cycle { object["cycle"] = cycle.json }
        return .object(object)
    }

    /// The same bytes as `json.serialized`, written straight into `bytes` without a tree
    /// (issue 30: a `Get` answered without one). A cycle, rare, is written through its tree.
    package func writeJSON(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"name":"#.utf8)
        JSONValue.writeString(name, into: &bytes)
        bytes.append(contentsOf: #","state":"#.utf8)
        JSONValue.writeString(state.rawValue, into: &bytes)
        bytes.append(contentsOf: #","elapsed_ms":"#.utf8)
        JSONValue.writeInteger(elapsedMs, into: &bytes)
        bytes.append(contentsOf: #","laps_ms":["#.utf8)
        for (index, lap) in lapsMs.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.writeInteger(lap, into: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        if let targetMs {
            bytes.append(contentsOf: #","target_ms":"#.utf8)
            JSONValue.writeInteger(targetMs, into: &bytes)
        }
        if !countsSleep { bytes.append(contentsOf: #","counts_sleep":false"#.utf8) }
        if let note {
            bytes.append(contentsOf: #","note":"#.utf8)
            JSONValue.writeString(note, into: &bytes)
        }
        if let cycle {
            bytes.append(contentsOf: #","cycle":"#.utf8)
            cycle.json.write(into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The reply to a `Get` of this stopwatch as it goes on the wire, its NUL included: the
    /// bytes of `VarlinkReply(parameters: ["stopwatch": json]).message`, without the trees.
    package var getReplyMessage: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128 + 8 * lapsMs.count)
        bytes.append(contentsOf: #"{"parameters":{"stopwatch":"#.utf8)
        writeJSON(into: &bytes)
        bytes.append(contentsOf: "}}".utf8)
        bytes.append(0)
        return bytes
    }

    /// The reply to a `List` of `stopwatches` as it goes on the wire, its NUL included: the
    /// bytes of `VarlinkReply(parameters: ["stopwatches": [json, …]]).message`, without the
    /// trees.
    package static func listReplyMessage(_ stopwatches: [Stopwatch]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32 + 96 * stopwatches.count)
        bytes.append(contentsOf: #"{"parameters":{"stopwatches":["#.utf8)
        for (index, stopwatch) in stopwatches.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            stopwatch.writeJSON(into: &bytes)
        }
        bytes.append(contentsOf: "]}}".utf8)
        bytes.append(0)
        return bytes
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
        var cycle: Cycle?
        switch object["cycle"] {
        case nil, .null?: break
        case let value?: cycle = try Cycle(json: value)
        }
        self.init(
            name: name, state: state, elapsedMs: elapsedMs, lapsMs: lapsMs, targetMs: targetMs, countsSleep: countsSleep, note: note,
            cycle: cycle
        )
    }
}

extension Stopwatch.Phase {
    package var json: JSONValue {
        .object(["label": .string(label), "target_ms": .int(targetMs)])
    }

    package init(json: JSONValue) throws(MalformedMessage) {
        guard case .object(let object) = json else { throw MalformedMessage("a Phase is not an object") }
        guard case .string(let label)? = object["label"] else { throw MalformedMessage("Phase.label is not a string") }
        guard case .int(let targetMs)? = object["target_ms"] else { throw MalformedMessage("Phase.target_ms is not an integer") }
        self.init(label: label, targetMs: targetMs)
    }
}

extension Stopwatch.Cycle {
    package var json: JSONValue {
        var object: JSONObject = [
            "phases": .array(phases.map(\.json)),
            "phase": .int(Int64(phase)),
            "round": .int(Int64(round)),
            "auto": .bool(auto),
        ]
        if let rounds { object["rounds"] = .int(Int64(rounds)) }
        return .object(object)
    }

    package init(json: JSONValue) throws(MalformedMessage) {
        guard case .object(let object) = json else { throw MalformedMessage("Stopwatch.cycle is not an object") }
        guard case .array(let list)? = object["phases"] else { throw MalformedMessage("Cycle.phases is not an array") }
        var phases: [Stopwatch.Phase] = []
        for phase in list { phases.append(try Stopwatch.Phase(json: phase)) }
        // Int(exactly:) so that no number from the wire can trap a 32-bit conversion.
        guard case .int(let phase)? = object["phase"], let phaseIndex = Int(exactly: phase) else {
            throw MalformedMessage("Cycle.phase is not an integer")
        }
        guard case .int(let round)? = object["round"], let roundNumber = Int(exactly: round) else {
            throw MalformedMessage("Cycle.round is not an integer")
        }
        var rounds: Int?
        switch object["rounds"] {
        case nil, .null?: break
        case .int(let value)?:
            guard let count = Int(exactly: value) else { throw MalformedMessage("Cycle.rounds is out of range") }
            rounds = count
        default: throw MalformedMessage("Cycle.rounds is not an integer")
        }
        guard case .bool(let auto)? = object["auto"] else { throw MalformedMessage("Cycle.auto is not true or false") }
        self.init(phases: phases, phase: phaseIndex, round: roundNumber, rounds: rounds, auto: auto)
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

extension Stopwatch {
    /// A cycle that has run its rounds: expired in the last phase of its last round, where it
    /// stays (SPEC §3). One without an end (`rounds` nil) never finishes. (Comparing cannot
    /// overflow, whatever the daemon sent.)
    package var hasFinishedCycle: Bool {
        guard let cycle, let rounds = cycle.rounds, let targetMs else { return false }
        return cycle.round >= rounds && cycle.phase >= cycle.phases.count - 1 && elapsedMs >= targetMs
    }
}
