import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// A blocking Unix stream connection carrying NUL-terminated messages: the client side of
/// every call swbench makes, to the daemon and to its own echo server alike, so that both
/// pay the same client costs. A reply that does not come within 10 s is an error.
final class MessageConnection {
    let descriptor: FileDescriptor
    /// What has been read past the last complete message.
    private var pending: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    init(path: String) throws(Errno) {
        descriptor = try FileDescriptor.unixStreamSocket(nonBlocking: false)
        do throws(Errno) {
            try descriptor.connect(toPath: path)
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            guard setsockopt(descriptor.rawValue, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
                throw Errno(errno)
            }
        } catch {
            descriptor.close()
            throw error
        }
    }

    /// Sends `message`, which must end with its NUL.
    func send(_ message: [UInt8]) throws(Errno) {
        var sent = 0
        while sent < message.count {
            sent += try descriptor.send(message, from: sent)
        }
    }

    /// The next message, without its NUL. Each byte is looked at once, so a reply of
    /// 100 KB (a stopwatch of 10,000 laps) costs the client its size, not its size squared.
    func receive() throws(Errno) -> [UInt8] {
        var searched = 0
        while true {
            if let end = pending[searched...].firstIndex(of: 0) {
                let message = Array(pending[..<end])
                pending.removeSubrange(...end)
                return message
            }
            searched = pending.count
            let descriptor = self.descriptor
            let result = chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(Errno) -> Int in try descriptor.read(into: buffer) }
            }
            let count = try result.get()
            guard count > 0 else { throw Errno.connectionReset }
            pending += chunk[..<count]
        }
    }

    /// Sends `message` (with its NUL); a failure is the measurement's.
    func sendOrThrow(_ message: [UInt8]) throws(BenchError) {
        do {
            try send(message)
        } catch {
            throw BenchError("a call could not be sent: \(error)")
        }
    }

    /// Sends `message` (with its NUL) and returns the reply (without).
    func roundTrip(_ message: [UInt8]) throws(BenchError) -> [UInt8] {
        do {
            try send(message)
            return try receive()
        } catch {
            throw BenchError("a call failed: \(error)")
        }
    }

    /// Whether bytes of a further message have been read already.
    var hasPendingBytes: Bool { !pending.isEmpty }

    /// Makes `call` and returns its reply, parsed.
    func call(_ call: VarlinkCall) throws(BenchError) -> VarlinkReply {
        var message = call.json.serialized
        message.append(0)
        do {
            try send(message)
            return try VarlinkReply(json: JSONParser.parse(try receive()))
        } catch {
            throw BenchError("\(call.method) failed: \(error)")
        }
    }

    /// The stopwatch in the reply to `call`; an error reply is an error.
    func stopwatch(_ call: VarlinkCall) throws(BenchError) -> Stopwatch {
        let reply = try self.call(call)
        guard reply.error == nil, let value = reply.parameters["stopwatch"], let stopwatch = try? Stopwatch(json: value) else {
            throw BenchError("\(call.method) replied \(reply.json.text)")
        }
        return stopwatch
    }

    func close() {
        descriptor.close()
    }
}
