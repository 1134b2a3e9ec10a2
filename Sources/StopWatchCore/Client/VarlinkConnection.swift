/// A client's connection to a varlink service on a Unix socket. Blocking: each call waits
/// for its reply (at most `timeout`). Close it with `close()`.
public final class VarlinkConnection {
    public let path: String
    private let socket: FileDescriptor
    private var framer = VarlinkFramer(maximumMessageSize: 64 * 1024 * 1024)
    private var received: [[UInt8]] = []
    private let timeout: Duration?

    /// Connects to `path`.
    /// - Parameter timeout: how long to wait for each reply; nil waits for ever (for watches).
    public init(path: String, timeout: Duration? = .seconds(10)) throws(ClientError) {
        self.path = path
        self.timeout = timeout
        do {
            socket = try FileDescriptor.unixStreamSocket(nonBlocking: false)
        } catch {
            throw .unreachable(path: path, reason: "cannot create a socket: \(error)")
        }
        do {
            try socket.connect(toPath: path)
        } catch {
            socket.close()
            switch error {
            case .permissionDenied, .notPermitted: throw .permissionDenied(path: path)
            default: throw .unreachable(path: path, reason: error.description)
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
    public func send(_ call: VarlinkCall) throws(ClientError) {
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
                throw .refused(VarlinkError(name: refusal, parameters: reply.parameters))
            }
            throw .unreachable(path: path, reason: "the daemon went away: \(error)")
        }
    }

    /// The next reply. An error reply is returned, not thrown: the caller decides.
    public func receive() throws(ClientError) -> VarlinkReply {
        while received.isEmpty {
            try fill()
        }
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
    public func call(_ call: VarlinkCall) throws(ClientError) -> JSONObject {
        try send(call)
        let reply = try receive()
        if let error = reply.error {
            throw .refused(VarlinkError(name: error, parameters: reply.parameters))
        }
        return reply.parameters
    }

    private func fill() throws(ClientError) {
        do {
            guard try socket.poll(timeout: timeout) else {
                throw ClientError.unreachable(path: path, reason: "no reply within \(DurationText.string(timeout ?? .zero))")
            }
        } catch let error as ClientError {
            throw error
        } catch {
            throw .unreachable(path: path, reason: "\(error)")
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count: Int
        do {
            count = try buffer.withUnsafeMutableBytes { (bytes) throws(Errno) -> Int in try socket.read(into: bytes) }
        } catch {
            throw .unreachable(path: path, reason: "the daemon went away: \(error)")
        }
        guard count > 0 else {
            throw .unreachable(path: path, reason: "the daemon closed the connection")
        }
        do {
            let messages = try buffer.withUnsafeBytes { bytes in
                try framer.append(UnsafeRawBufferPointer(rebasing: bytes[..<count]))
            }
            received.append(contentsOf: messages)
        } catch {
            throw .protocolViolation("a reply larger than \(framer.maximumMessageSize) bytes")
        }
    }

    /// Closes the connection; further calls fail.
    public func close() {
        isClosed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            socket.close()
        }
    }

    /// Makes a blocked `receive` on another thread return (with an error): for cancelling a watch.
    public func interrupt() {
        isClosed.withLock { isClosed in
            guard !isClosed else { return }
            socket.shutdown()
        }
    }
}
