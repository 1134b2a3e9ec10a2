import LinuxSystem
import StopwatchProtocol
import Varlink

/// A client's connection to a varlink service on a Unix socket. Blocking: each call waits
/// for its reply (at most `timeout`). Close it with `close()`.
package final class VarlinkConnection {
    package let path: String
    private let socket: FileDescriptor
    private var framer = VarlinkFramer(maximumMessageSize: 64 * 1024 * 1024)
    private var received: [[UInt8]] = []
    private let timeout: Duration?

    /// Connects to `path`.
    /// - Parameter timeout: how long to wait for the connection and then for each reply;
    ///   nil waits for replies for ever (for watches), and for the connection 10 s.
    package init(path: String, timeout: Duration? = .seconds(10)) throws(ClientError) {
        self.path = path
        self.timeout = timeout
        // Stored only once connected: were `self.socket` set before a throw, `deinit` would
        // run and close the descriptor a second time, by then maybe another thread's file.
        socket = try Self.connect(to: path, waitingAtMost: timeout ?? .seconds(10))
    }

    private static func connect(to path: String, waitingAtMost timeout: Duration) throws(ClientError) -> FileDescriptor {
        let socket: FileDescriptor
        do {
            socket = try FileDescriptor.unixStreamSocket(nonBlocking: true)
        } catch {
            throw .unreachable(path: path, reason: "cannot create a socket: \(error)")
        }
        // Non-blocking, so a daemon whose backlog is full cannot hang us: retry until the deadline.
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                try socket.connect(toPath: path)
                try socket.setNonBlocking(false)
                return socket
            } catch where error == .wouldBlock && ContinuousClock.now < deadline {
                CurrentProcess.sleep(for: .milliseconds(5))
            } catch {
                socket.close()
                switch error {
                case .permissionDenied, .notPermitted: throw .permissionDenied(path: path)
                case .wouldBlock: throw .unreachable(path: path, reason: "the daemon accepts no connections (its backlog is full)")
                default: throw .unreachable(path: path, reason: error.description)
                }
            }
        }
    }

    /// Whether the socket is closed: under a lock because `interrupt` comes from another
    /// thread, and must never shut down a descriptor number that has been reused.
    private let isClosed = Locked(false)

    deinit {
        close()
    }

    /// Sends `call` without waiting for anything.
    package func send(_ call: VarlinkCall) throws(ClientError) {
        var message = call.json.serialized
        message.append(0)
        do {
            var sent = 0
            while sent < message.count {
                sent += try socket.send(message, from: sent)
            }
        } catch {
            // A daemon that refuses a client (permission, connection limit) answers and closes
            // at once, maybe before reading the call: its answer is still here to read.
            if let reply = try? receive(), let refusal = reply.error {
                throw ClientError.reply(VarlinkError(name: refusal, parameters: reply.parameters), path: path)
            }
            throw .unreachable(path: path, reason: "the daemon went away: \(error)")
        }
    }

    /// The next reply. An error reply is returned, not thrown: the caller decides.
    package func receive() throws(ClientError) -> VarlinkReply {
        while received.isEmpty {
            guard try fill(waitingAtMost: timeout) else {
                throw ClientError.unreachable(path: path, reason: "no reply within \(DurationText.string(timeout ?? .zero))")
            }
        }
        return try decodeFirst()
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

    private func decodeFirst() throws(ClientError) -> VarlinkReply {
        let message = received.removeFirst()
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
        return try reply.result(path: path)
    }

    /// Reads what the socket has into `received`; false when nothing came within `wait`
    /// (nil: for ever).
    private func fill(waitingAtMost wait: Duration?) throws(ClientError) -> Bool {
        do {
            guard try socket.poll(timeout: wait) else { return false }
        } catch {
            throw .unreachable(path: path, reason: "\(error)")
        }
        let bytes: [UInt8]
        do {
            bytes = try socket.read(upTo: 64 * 1024)
        } catch {
            throw .unreachable(path: path, reason: "the daemon went away: \(error)")
        }
        guard !bytes.isEmpty else {
            throw .unreachable(path: path, reason: "the daemon closed the connection")
        }
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
            socket.close()
        }
    }

    /// Makes a blocked `receive` on another thread return (with an error): for cancelling a watch.
    package func interrupt() {
        isClosed.withLock { isClosed in
            guard !isClosed else { return }
            socket.shutdown()
        }
    }
}

extension VarlinkReply {
    /// The parameters of a success; an error reply thrown as the `ClientError` it means.
    package func result(path: String) throws(ClientError) -> JSONObject {
        guard let error else { return parameters }
        throw ClientError.reply(VarlinkError(name: error, parameters: parameters), path: path)
    }

    /// The `stopwatch` a reply to `method` carries.
    package func stopwatch(path: String, method: String) throws(ClientError) -> Stopwatch {
        guard let stopwatch = try result(path: path)["stopwatch"] else {
            throw .protocolViolation("\(method) replied without a stopwatch")
        }
        do {
            return try Stopwatch(json: stopwatch)
        } catch {
            throw .protocolViolation(error.reason)
        }
    }
}
