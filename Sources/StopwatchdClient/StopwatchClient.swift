import Dispatch
import LinuxSystem
import StopwatchProtocol
import Varlink

/// Drives a stopwatchd over its socket, or on another machine through a command that
/// bridges to it (`ssh HOST swctl bridge`): the API `swctl` is built on, for any Swift program.
///
///     let client = StopwatchClient()              // the socket swctl would use
///     let stopwatch = try client.start("tea")
///     for try await update in client.watch("tea") { print(update.elapsedMs) }
///
///     let desk = StopwatchClient(endpoint: StopwatchClient.sshBridge(host: "desk"))
///
/// Each call opens a connection (through a bridge, starts the command), waits for its reply
/// and closes it; a watch keeps its own connection open until it ends.
public struct StopwatchClient: Sendable {
    /// Where the daemon is.
    public let endpoint: Endpoint
    /// How long to wait for the daemon to answer a call.
    public var timeout: Duration

    /// A client of the daemon listening on `socketPath`; by default the one `swctl` finds
    /// without options (`defaultSocketPath()`).
    public init(socketPath: String = StopwatchClient.defaultSocketPath(), timeout: Duration = .seconds(10)) {
        self.endpoint = .socket(socketPath)
        self.timeout = timeout
    }

    /// A client of the daemon at `endpoint`: a socket, or a bridge command such as
    /// `sshBridge(host:)`.
    public init(endpoint: Endpoint, timeout: Duration = .seconds(10)) {
        self.endpoint = endpoint
        self.timeout = timeout
    }

    /// The socket `swctl` uses when given no socket option (SPEC §5): `$STOPWATCHD_SOCKET`,
    /// else the user daemon's (`$XDG_RUNTIME_DIR/stopwatchd/stopwatchd.sock`) if that socket
    /// exists, else the system daemon's (`/run/stopwatchd/stopwatchd.sock`). Looked for again
    /// at each call: a user daemon started meanwhile is found.
    public static func defaultSocketPath() -> String {
        // Never nil for `.automatic`: only `--user` without XDG_RUNTIME_DIR has no path.
        SocketLocation.clientPath(.automatic, environment: .current) ?? SocketLocation.systemPath
    }

    /// Starts counting, or resumes a paused stopwatch; creates it if needed. A nil `name`
    /// is the daemon's default stopwatch ("default"), here and below. Stop, reset, lap and
    /// remove create nothing: of a name no stopwatch has they are refused
    /// (`io.stopwatchd.NoSuchStopwatch`), so a typo is told.
    ///
    /// `at`: it began at that earlier wall-clock instant (milliseconds since the Unix epoch),
    /// not now; refused (`io.stopwatchd.InvalidInterval`, with the allowed range) in the
    /// future or before the stopwatch's latest transition. `note`: what the new interval is
    /// for (`IntervalNote`'s rule: 1 to 1,024 scalars, no control character).
    public func start(_ name: String? = nil, at: Int64? = nil, note: String? = nil) throws(ClientError) -> Stopwatch {
        try command("Start", name, Self.transition(at: at, note: note))
    }
    /// Pauses a counting stopwatch; `at`: it ended at that earlier instant (as `start`'s).
    public func stop(_ name: String? = nil, at: Int64? = nil) throws(ClientError) -> Stopwatch {
        try command("Stop", name, Self.transition(at: at, note: nil))
    }
    /// Starts when not counting, stops when counting; `at` and `note` as `start`'s (a
    /// note goes with a start only).
    public func toggle(_ name: String? = nil, at: Int64? = nil, note: String? = nil) throws(ClientError) -> Stopwatch {
        try command("Toggle", name, Self.transition(at: at, note: note))
    }
    /// Whether time in suspend counts (`true`, the default) or only time awake (`false`:
    /// a time tracker left running over a closed lid reads the time worked); creates the
    /// stopwatch if needed.
    public func setCountsSleep(_ name: String? = nil, _ countsSleep: Bool) throws(ClientError) -> Stopwatch {
        try command("SetCountsSleep", name, ["counts_sleep": .bool(countsSleep)])
    }
    /// Back to zero, laps cleared; refused (`ClientError.refused`) while counting.
    public func reset(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Reset", name) }
    /// Records a split time; refused unless counting.
    public func lap(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Lap", name) }
    /// The stopwatch as it is now; one never started reads as stopped at zero (not created).
    public func get(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Get", name) }
    /// From any state: back to zero, laps cleared, and counting down from `target` at once.
    /// `target` is 1 ms to 366 days.
    public func countdown(_ name: String? = nil, target: Duration) throws(ClientError) -> Stopwatch {
        try command("Countdown", name, ["target_ms": .int(target.milliseconds)])
    }
    /// `countdown`, and the stopwatch as it was just before: a `Get` sent with the
    /// `Countdown`, in one write on the same connection, which the daemon answers in order.
    /// So `swctl timer` can say what the countdown cleared (its laps) for no connection (no
    /// ssh) and no round trip more.
    /// `before` is nil if the Get was refused while the Countdown was not.
    package func countdownAfterGet(_ name: String?, target: Duration) throws(ClientError) -> (before: Stopwatch?, after: Stopwatch) {
        var parameters: JSONObject = [:]
        if let name { parameters["name"] = .string(name) }
        let get = VarlinkCall(method: "io.stopwatchd.Get", parameters: parameters)
        parameters["target_ms"] = .int(target.milliseconds)
        let countdown = VarlinkCall(method: "io.stopwatchd.Countdown", parameters: parameters)
        let connection = try VarlinkConnection(endpoint: endpoint, timeout: timeout)
        defer { connection.close() }
        try connection.send([get, countdown])
        // The Get's refusal, should it come, is no reason to hide the Countdown's outcome: its
        // reply is read all the same, and the stopwatch before is then unknown.
        let before = Result { () throws(ClientError) in try connection.receive().stopwatch(from: connection, method: "Get") }
        let after = try connection.receive().stopwatch(from: connection, method: "Countdown")
        return (try? before.get(), after)
    }
    /// Makes it a countdown of `target` without changing its state, elapsed time or laps (a
    /// reminder on a running stopwatch), or a plain stopwatch again with nil; creates it if
    /// needed.
    public func setTarget(_ name: String? = nil, target: Duration?) throws(ClientError) -> Stopwatch {
        try command("SetTarget", name, ["target_ms": target.map { .int($0.milliseconds) } ?? .null])
    }

    /// Makes it run `phases` in order, each a countdown of its `targetMs`, `rounds` times
    /// (nil: until stopped), from the first phase, now, from any state (as `countdown`, it
    /// clears elapsed time and laps); `auto`: each phase starts at the instant the last one
    /// expires, else at `next`. Limits in `CyclePlan` (refused as `InvalidParameter`
    /// otherwise); creates the stopwatch if needed.
    public func startCycle(_ name: String? = nil, phases: [Stopwatch.Phase], rounds: Int? = nil, auto: Bool = true) throws(ClientError) -> Stopwatch {
        var arguments: JSONObject = [
            "phases": .array(phases.map(\.json)),
            "auto": .bool(auto),
        ]
        if let rounds { arguments["rounds"] = .int(Int64(rounds)) }
        return try command("StartCycle", name, arguments)
    }
    /// Ends a cycle's current phase now and starts the next; refused (`InvalidTransition`)
    /// for a stopwatch without a cycle, or in the last phase of the last round.
    public func next(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Next", name) }
    /// An expired countdown (or cycle phase) counts on and expires again `by` from now (1 s
    /// to 24 h, whole milliseconds); refused (`InvalidTransition`) unless expired and counting.
    public func snooze(_ name: String? = nil, by: Duration) throws(ClientError) -> Stopwatch {
        try command("Snooze", name, ["by_ms": .int(by.milliseconds)])
    }
    /// The same countdown from zero, now, counting (a cycle: from its first phase of round 1);
    /// refused (`InvalidTransition`) on a plain stopwatch.
    public func restart(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Restart", name) }

    /// Every stopwatch the daemon keeps, sorted by name.
    public func list() throws(ClientError) -> [Stopwatch] {
        let reply = try call(VarlinkCall(method: "io.stopwatchd.List"))
        guard case .array(let items)? = reply["stopwatches"] else {
            throw .protocolViolation("List replied without stopwatches")
        }
        var stopwatches: [Stopwatch] = []
        for item in items {
            do {
                stopwatches.append(try Stopwatch(json: item))
            } catch {
                throw .protocolViolation(error.reason)
            }
        }
        return stopwatches
    }

    /// Deletes stopwatch `name`; refused if there is none.
    public func remove(_ name: String) throws(ClientError) {
        _ = try call(VarlinkCall(method: "io.stopwatchd.Remove", parameters: ["name": .string(name)]))
    }

    /// The counting intervals that overlap [`since`, `until`) (wall clock, milliseconds since
    /// the Unix epoch; nil leaves that end open), of stopwatch `name` or, with nil, of every
    /// stopwatch, removed ones included: a stream of batches read with `next()`, so memory
    /// holds one batch, not the history. A daemon that predates history refuses with
    /// `org.varlink.service.MethodNotFound`.
    ///
    /// `device`: only the intervals of the device of that name or id (`devices()`). A daemon
    /// that predates devices would ignore it: it is sent only once `Devices` answers (one call
    /// more, on the same connection), and `daemonTooOld(feature: "--device")` thrown otherwise.
    public func history(_ name: String? = nil, since: Int64? = nil, until: Int64? = nil, device: String? = nil) throws(ClientError) -> HistoryStream {
        let connection = try VarlinkConnection(endpoint: endpoint, timeout: timeout)
        var parameters = JSONObject()
        if let name { parameters["name"] = .string(name) }
        if let since { parameters["since_ms"] = .int(since) }
        if let until { parameters["until_ms"] = .int(until) }
        if let device {
            do {
                _ = try Self.devices(on: connection, feature: "--device")
            } catch {
                connection.close()
                throw error
            }
            parameters["device"] = .string(device)
        }
        do {
            try connection.send(VarlinkCall(method: "io.stopwatchd.History", parameters: parameters, more: true))
        } catch {
            connection.close()
            throw error
        }
        return HistoryStream(connection: connection)
    }

    /// Adds an ended interval of `name` from `start` to `end` (wall clock, milliseconds since
    /// the epoch) to the history; no stopwatch changes. Refused
    /// (`io.stopwatchd.InvalidInterval`, saying why) for an end at or before the start or in
    /// the future, more than 366 days, or an overlap with another interval of `name`.
    public func track(_ name: String, start: Int64, end: Int64, note: String? = nil) throws(ClientError) -> Interval {
        var parameters: JSONObject = ["name": .string(name), "start_ms": .int(start), "end_ms": .int(end)]
        if let note { parameters["note"] = .string(note) }
        return try intervalCall("Track", parameters)
    }

    /// Corrects the ended interval `id` (its 16 hex digits, or a unique prefix of 6 or more):
    /// the fields given change, the others stay, and it keeps its id. Refused as `track`,
    /// and with `io.stopwatchd.NoSuchInterval` for an id that names none.
    public func amend(
        _ id: String, name: String? = nil, start: Int64? = nil, end: Int64? = nil, note: String? = nil
    ) throws(ClientError) -> Interval {
        var parameters: JSONObject = ["id": .string(id)]
        if let name { parameters["name"] = .string(name) }
        if let start { parameters["start_ms"] = .int(start) }
        if let end { parameters["end_ms"] = .int(end) }
        if let note { parameters["note"] = .string(note) }
        return try intervalCall("Amend", parameters)
    }

    /// Removes the ended interval `id` (as `amend` names it) from the history; the interval
    /// as it was.
    public func delete(_ id: String) throws(ClientError) -> Interval {
        try intervalCall("Delete", ["id": .string(id)])
    }

    /// Takes back this daemon's latest `track`, `amend` or `delete` not yet taken back (the
    /// one before it at the next call): the interval as it is afterwards, and what was
    /// undone. With nothing left, refused with `io.stopwatchd.NothingToUndo`.
    public func undo() throws(ClientError) -> (interval: Interval, undone: Correction) {
        let reply = try call(VarlinkCall(method: "io.stopwatchd.Undo"))
        let interval = try Self.interval(in: reply, method: "Undo")
        guard case .string(let word)? = reply["undone"], let undone = Correction(rawValue: word) else {
            throw .protocolViolation("Undo replied without what it undid (track, amend or delete)")
        }
        return (interval, undone)
    }

    /// The devices whose history the daemon reads (SPEC §3 `Devices`): its own (`this`) first,
    /// then those whose folders a sync tool brought. A daemon that predates devices refuses
    /// with `org.varlink.service.MethodNotFound`.
    public func devices() throws(ClientError) -> [Device] {
        let connection = try VarlinkConnection(endpoint: endpoint, timeout: timeout)
        defer { connection.close() }
        return try Self.devices(on: connection, feature: nil)
    }

    /// `Devices` on `connection`; with `feature`, a daemon that has no `Devices` (or no
    /// `io.stopwatchd`'s `Devices` parameters) is `daemonTooOld(feature)`.
    private static func devices(on connection: VarlinkConnection, feature: String?) throws(ClientError) -> [Device] {
        let reply: JSONObject
        do {
            reply = try connection.call(VarlinkCall(method: "io.stopwatchd.Devices"))
        } catch {
            if let feature, case .refused(let name, _) = error, name == VarlinkError.methodNotFound("").name {
                throw .daemonTooOld(feature: feature)
            }
            throw error
        }
        guard case .array(let items)? = reply["devices"] else { throw .protocolViolation("Devices replied without devices") }
        var devices: [Device] = []
        for item in items {
            do {
                devices.append(try Device(json: item))
            } catch {
                throw .protocolViolation(error.reason)
            }
        }
        return devices
    }

    /// Calls any method and returns the reply's parameters.
    package func call(_ call: VarlinkCall) throws(ClientError) -> JSONObject {
        let connection = try VarlinkConnection(endpoint: endpoint, timeout: timeout)
        defer { connection.close() }
        return try connection.call(call)
    }

    /// Opens a watch: the first `next()` is the current state, then one per change, tick and
    /// expiry.
    /// Blocking; `watch(_:)` wraps it as an `AsyncSequence`.
    public func openWatch(_ name: String? = nil) throws(ClientError) -> WatchStream {
        let connection = try VarlinkConnection(endpoint: endpoint, timeout: nil)
        var parameters = JSONObject()
        if let name { parameters["name"] = .string(name) }
        try connection.send(VarlinkCall(method: "io.stopwatchd.Watch", parameters: parameters, more: true))
        return WatchStream(connection: connection)
    }

    /// The states of stopwatch `name` as they come, until the daemon goes away (then it
    /// throws a `ClientError`) or the consumer stops.
    public func watch(_ name: String? = nil) -> AsyncThrowingStream<Stopwatch, any Error> {
        AsyncThrowingStream { continuation in
            let stream: WatchStream
            do {
                stream = try openWatch(name)
            } catch {
                continuation.finish(throwing: error)
                return
            }
            continuation.onTermination = { _ in stream.interrupt() }
            DispatchQueue.global().async {
                do {
                    while true { continuation.yield(try stream.next()) }
                } catch {
                    continuation.finish(throwing: error)
                }
            }
        }
    }

    /// `at_ms` and `note` of Start, Stop and Toggle, those given.
    private static func transition(at: Int64?, note: String?) -> JSONObject {
        var parameters: JSONObject = [:]
        if let at { parameters["at_ms"] = .int(at) }
        if let note { parameters["note"] = .string(note) }
        return parameters
    }

    private func intervalCall(_ method: String, _ parameters: JSONObject) throws(ClientError) -> Interval {
        try Self.interval(in: call(VarlinkCall(method: "io.stopwatchd.\(method)", parameters: parameters)), method: method)
    }

    /// The `interval` of a Track, Amend, Delete or Undo reply.
    static func interval(in reply: JSONObject, method: String) throws(ClientError) -> Interval {
        guard let item = reply["interval"] else { throw .protocolViolation("\(method) replied without an interval") }
        do {
            return try Interval(json: item)
        } catch {
            throw .protocolViolation(error.reason)
        }
    }

    private func command(_ method: String, _ name: String?, _ arguments: JSONObject = [:]) throws(ClientError) -> Stopwatch {
        var parameters = arguments
        if let name { parameters["name"] = .string(name) }
        let connection = try VarlinkConnection(endpoint: endpoint, timeout: timeout)
        defer { connection.close() }
        if let feature = Self.featureOfThisRelease(in: arguments) { try Self.requireTimesInThePast(on: connection, for: feature) }
        try connection.send(VarlinkCall(method: "io.stopwatchd.\(method)", parameters: parameters))
        return try connection.receive().stopwatch(from: connection, method: method)
    }

    /// The option of `arguments` that a daemon of the previous release would ignore without a
    /// word (`at_ms`, `note`: varlink lets a service skip parameters it does not know), as
    /// `swctl` spells it; nil when there is none.
    private static func featureOfThisRelease(in arguments: JSONObject) -> String? {
        if arguments["at_ms"] != nil { return "--at" }
        if arguments["note"] != nil { return "--note" }
        return nil
    }

    /// Throws `daemonTooOld(feature)` unless the daemon's `io.stopwatchd` has `at_ms` (it came
    /// with notes, in the same release): asked on `connection` before the command, so a daemon
    /// too old changes nothing. It cannot be sent with the command in one write, as the
    /// command would then run whatever the answer: one round trip more, on the same connection,
    /// and only for a command that gives `at_ms` or `note`.
    private static func requireTimesInThePast(on connection: VarlinkConnection, for feature: String) throws(ClientError) {
        let reply = try connection.call(
            VarlinkCall(method: "org.varlink.service.GetInterfaceDescription", parameters: ["interface": .string(StopwatchdInterface.name)])
        )
        guard case .string(let description)? = reply["description"] else {
            throw .protocolViolation("GetInterfaceDescription replied without a description")
        }
        guard description.contains("at_ms:") else { throw .daemonTooOld(feature: feature) }
    }
}
