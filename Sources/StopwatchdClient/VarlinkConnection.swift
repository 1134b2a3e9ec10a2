import LinuxSystem
import StopwatchProtocol
import Varlink

/// A client's connection to a varlink service: on a Unix socket, or through a command's
/// pipes (the varlink bridge, `ssh HOST swctl bridge`). Blocking: each call waits for its
/// reply (at most `timeout`). Close it with `close()`.
package final class VarlinkConnection {
    private let transport: any VarlinkTransport
    private var framer = VarlinkFramer(maximumMessageSize: 64 * 1024 * 1024)
    private var received: [[UInt8]] = []
    private let timeout: Duration?

    /// Connects to the socket at `path`.
    /// - Parameter timeout: how long to wait for the connection and then for each reply;
    ///   nil waits for replies for ever (for watches), and for the connection 10 s.
    package convenience init(path: String, timeout: Duration? = .seconds(10)) throws(ClientError) {
        try self.init(endpoint: .socket(path), timeout: timeout)
    }

    /// Connects to `endpoint`: a socket, or a bridge command started now.
    package init(endpoint: StopwatchClient.Endpoint, timeout: Duration? = .seconds(10)) throws(ClientError) {
        self.timeout = timeout
        // Stored last: a throw before it runs no `deinit`, so nothing is closed twice.
        switch endpoint {
        case .socket(let path): transport = try SocketTransport(path: path, timeout: timeout ?? .seconds(10))
        case .bridge(let arguments): transport = try ChildProcessTransport(arguments: arguments)
        }
    }

    /// The error for a failure of this connection with `reason`: the daemon unreachable at
    /// its socket, or the bridge command failed (with its own message when it gave one).
    package func failure(_ reason: String) -> ClientError {
        transport.failure(reason)
    }

    /// Whether the transport is closed: under a lock because `interrupt` comes from another
    /// thread, and must never shut down a descriptor number that has been reused (nor signal
    /// a bridge command's pid once reaped).
    private let isClosed = Locked(false)

    deinit {
        close()
    }

    /// Sends `call` without waiting for anything.
    package func send(_ call: VarlinkCall) throws(ClientError) {
        try send([call])
    }

    /// Sends `calls` in one write, without waiting for anything: the daemon reads them
    /// together and answers them in order, one after the other.
    package func send(_ calls: [VarlinkCall]) throws(ClientError) {
        var message: [UInt8] = []
        for call in calls {
            message += call.json.serialized
            message.append(0)
        }
        do {
            try transport.send(message)
        } catch {
            // A daemon that refuses a client (permission, connection limit) answers and closes
            // at once, maybe before reading the call: its answer is still here to read.
            if let reply = try? receive(), let refusal = reply.error {
                throw ClientError.reply(VarlinkError(name: refusal, parameters: reply.parameters), unreachable: failure)
            }
            throw error
        }
    }

    /// The next reply. An error reply is returned, not thrown: the caller decides.
    package func receive() throws(ClientError) -> VarlinkReply {
        try decode(try receiveMessage())
    }

    /// The next reply, or nil when none is whole by `deadline` (on `ContinuousClock`): for
    /// a caller with a deadline of its own, such as `swctl wait --timeout`, whatever the
    /// connection's `timeout`. Bytes of a reply that is not whole yet are kept for the next
    /// call.
    package func receive(before deadline: ContinuousClock.Instant) throws(ClientError) -> VarlinkReply? {
        while received.isEmpty {
            // Past the deadline, still what has already come: a zero-timeout poll.
            let left = max(deadline - ContinuousClock.now, .zero)
            guard try fill(waitingAtMost: left) else { return nil }
        }
        return try decodeFirst()
    }

    /// The next reply's bytes, undecoded (without its NUL): for a reader with a faster
    /// decoder of its own for the replies it expects, which hands anything else to `decode`.
    package func receiveMessage() throws(ClientError) -> [UInt8] {
        while received.isEmpty {
            guard try fill(waitingAtMost: timeout) else {
                throw failure("no reply within \(DurationText.string(timeout ?? .zero))")
            }
        }
        return received.removeFirst()
    }

    private func decodeFirst() throws(ClientError) -> VarlinkReply {
        try decode(received.removeFirst())
    }

    /// `message` read as a reply.
    package func decode(_ message: [UInt8]) throws(ClientError) -> VarlinkReply {
        do {
            return try VarlinkReply(json: try JSONParser.parse(message))
        } catch let error as JSONParseError {
            throw .protocolViolation("a reply that is not JSON: \(error)")
        } catch {
            throw .protocolViolation("\(error)")
        }
    }

    /// Sends `call` and returns its reply's parameters; an error reply is thrown as `.refused`.
    package func call(_ call: VarlinkCall) throws(ClientError) -> JSONObject {
        try send(call)
        let reply = try receive()
        return try reply.result(from: self)
    }

    /// Reads what the transport has into `received`; false when nothing came within `wait`
    /// (nil: for ever).
    private func fill(waitingAtMost wait: Duration?) throws(ClientError) -> Bool {
        guard let bytes = try transport.receive(upTo: 64 * 1024, waitingAtMost: wait) else { return false }
        do {
            let messages = try bytes.withUnsafeBytes { try framer.append($0) }
            received.append(contentsOf: messages)
        } catch {
            throw .protocolViolation("a reply larger than \(framer.maximumMessageSize) bytes")
        }
        return true
    }

    /// Closes the connection; further calls fail.
    package func close() {
        isClosed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            transport.close()
        }
    }

    /// Makes a blocked `receive` on another thread return (with an error): for cancelling a watch.
    package func interrupt() {
        isClosed.withLock { isClosed in
            guard !isClosed else { return }
            transport.interrupt()
        }
    }
}

extension VarlinkReply {
    /// The parameters of a success; an error reply thrown as the `ClientError` it means
    /// (a connection limit as `connection`'s failure).
    package func result(from connection: VarlinkConnection) throws(ClientError) -> JSONObject {
        guard let error else { return parameters }
        throw ClientError.reply(VarlinkError(name: error, parameters: parameters), unreachable: connection.failure)
    }

    /// The `stopwatch` a reply to `method` carries.
    package func stopwatch(from connection: VarlinkConnection, method: String) throws(ClientError) -> Stopwatch {
        guard let stopwatch = try result(from: connection)["stopwatch"] else {
            throw .protocolViolation("\(method) replied without a stopwatch")
        }
        do {
            return try Stopwatch(json: stopwatch)
        } catch {
            throw .protocolViolation(error.reason)
        }
    }
}
