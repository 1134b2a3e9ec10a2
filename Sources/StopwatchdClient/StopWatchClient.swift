import Dispatch
import StopwatchProtocol
import Varlink

/// Drives a stopwatchd over its socket: the API `swctl` is built on, for any Swift program.
///
///     let client = StopWatchClient(socketPath: path)
///     let stopwatch = try client.start("tea")
///     for try await update in client.watch("tea") { print(update.elapsedMs) }
package struct StopWatchClient: Sendable {
    package let socketPath: String
    /// How long to wait for the daemon to answer a call.
    package var timeout: Duration

    package init(socketPath: String, timeout: Duration = .seconds(10)) {
        self.socketPath = socketPath
        self.timeout = timeout
    }

    package func start(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Start", name) }
    package func stop(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Stop", name) }
    package func toggle(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Toggle", name) }
    package func reset(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Reset", name) }
    package func lap(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Lap", name) }
    package func get(_ name: String? = nil) throws(ClientError) -> Stopwatch { try command("Get", name) }

    package func list() throws(ClientError) -> [Stopwatch] {
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

    package func remove(_ name: String) throws(ClientError) {
        _ = try call(VarlinkCall(method: "io.stopwatchd.Remove", parameters: ["name": .string(name)]))
    }

    /// Calls any method and returns the reply's parameters.
    package func call(_ call: VarlinkCall) throws(ClientError) -> JSONObject {
        let connection = try VarlinkConnection(path: socketPath, timeout: timeout)
        defer { connection.close() }
        return try connection.call(call)
    }

    /// Opens a watch: the first `next()` is the current state, then one per change and tick.
    /// Blocking; `watch(_:)` wraps it as an `AsyncSequence`.
    package func openWatch(_ name: String? = nil) throws(ClientError) -> WatchStream {
        let connection = try VarlinkConnection(path: socketPath, timeout: nil)
        var parameters = JSONObject()
        if let name { parameters["name"] = .string(name) }
        try connection.send(VarlinkCall(method: "io.stopwatchd.Watch", parameters: parameters, more: true))
        return WatchStream(connection: connection)
    }

    /// The states of stopwatch `name` as they come, until the daemon goes away (then it
    /// throws) or the consumer stops.
    package func watch(_ name: String? = nil) -> AsyncThrowingStream<Stopwatch, any Error> {
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

    private func command(_ method: String, _ name: String?) throws(ClientError) -> Stopwatch {
        var parameters = JSONObject()
        if let name { parameters["name"] = .string(name) }
        let connection = try VarlinkConnection(path: socketPath, timeout: timeout)
        defer { connection.close() }
        try connection.send(VarlinkCall(method: "io.stopwatchd.\(method)", parameters: parameters))
        return try connection.receive().stopwatch(path: socketPath, method: method)
    }
}
