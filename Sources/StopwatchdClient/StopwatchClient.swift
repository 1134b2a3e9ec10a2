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
    public func start(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Start", name) }
    /// Pauses a counting stopwatch.
    public func stop(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Stop", name) }
    /// Starts when not counting, stops when counting.
    public func toggle(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Toggle", name) }
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
    public func history(_ name: String? = nil, since: Int64? = nil, until: Int64? = nil) throws(ClientError) -> HistoryStream {
        let connection = try VarlinkConnection(endpoint: endpoint, timeout: timeout)
        var parameters = JSONObject()
        if let name { parameters["name"] = .string(name) }
        if let since { parameters["since_ms"] = .int(since) }
        if let until { parameters["until_ms"] = .int(until) }
        do {
            try connection.send(VarlinkCall(method: "io.stopwatchd.History", parameters: parameters, more: true))
        } catch {
            connection.close()
            throw error
        }
        return HistoryStream(connection: connection)
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

    private func command(_ method: String, _ name: String?, _ arguments: JSONObject = [:]) throws(ClientError) -> Stopwatch {
        var parameters = arguments
        if let name { parameters["name"] = .string(name) }
        let connection = try VarlinkConnection(endpoint: endpoint, timeout: timeout)
        defer { connection.close() }
        try connection.send(VarlinkCall(method: "io.stopwatchd.\(method)", parameters: parameters))
        return try connection.receive().stopwatch(from: connection, method: method)
    }
}
