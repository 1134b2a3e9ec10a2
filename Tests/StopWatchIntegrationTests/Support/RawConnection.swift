import Foundation
import LinuxSystem
import StopwatchProtocol
import Varlink

/// A socket to the daemon for sending arbitrary bytes and reading raw replies.
final class RawConnection {
    let socket: FileDescriptor
    private var framer = VarlinkFramer(maximumMessageSize: 16 * 1024 * 1024)
    private var messages: [[UInt8]] = []
    /// Reused for every read: a reader of thousands of replies should not zero 64 KiB each.
    private var chunk = [UInt8](repeating: 0, count: 65536)
    private(set) var isClosedByPeer = false

    init(_ path: String) throws {
        socket = try FileDescriptor.unixStreamSocket(nonBlocking: false)
        try socket.connect(toPath: path)
    }

    deinit { socket.close() }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count { sent += try socket.send(bytes, from: sent) }
    }

    /// Closes our sending side only: the daemon reads end-of-file but may still answer.
    func finishSending() {
        _ = Glibc.shutdown(socket.rawValue, CInt(SHUT_WR))
    }

    func send(_ text: String, terminated: Bool = true) throws {
        try send(Array(text.utf8) + (terminated ? [0] : []))
    }

    func call(_ method: String, _ parameters: String = "{}", more: Bool = false, oneway: Bool = false) throws {
        var fields = ["\"method\":\"\(method)\"", "\"parameters\":\(parameters)"]
        if more { fields.append("\"more\":true") }
        if oneway { fields.append("\"oneway\":true") }
        try send("{" + fields.joined(separator: ",") + "}")
    }

    /// The next reply as JSON, or nil when the daemon closed the connection or `timeout` passed.
    func reply(timeout: Duration = .seconds(20)) throws -> JSONObject? {
        let end = ContinuousClock.now + timeout
        while messages.isEmpty {
            let left = end - ContinuousClock.now
            guard !isClosedByPeer, left > .zero, try socket.poll(timeout: left) else { return nil }
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try socket.read(into: $0) }
            } catch let error as Errno where error == .connectionReset {
                count = 0
            }
            if count == 0 {
                isClosedByPeer = true
            } else {
                messages += try chunk.withUnsafeBytes { try framer.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            }
        }
        guard case .object(let object) = try JSONParser.parse(messages.removeFirst()) else { return nil }
        return object
    }

    /// Whether the daemon hangs up within `timeout`, found without reading (reading would be
    /// progress, and keep a slow-reader timeout from firing).
    func hangsUp(timeout: Duration = .seconds(20)) throws -> Bool {
        // POLLRDHUP, which Glibc's module hides behind _GNU_SOURCE.
        let readHangUp: Int16 = 0x2000
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            var entry = pollfd(fd: socket.rawValue, events: readHangUp, revents: 0)
            let ready = poll(&entry, 1, 100)
            if ready > 0, entry.revents & (readHangUp | Int16(POLLHUP | POLLERR)) != 0 { return true }
        }
        return false
    }

    /// Whether the daemon closes the connection within `timeout` (after any replies).
    func closesByPeer(timeout: Duration = .seconds(20)) throws -> Bool {
        let end = ContinuousClock.now + timeout
        while !isClosedByPeer, ContinuousClock.now < end {
            _ = try reply(timeout: end - ContinuousClock.now)
        }
        return isClosedByPeer
    }
}

extension JSONObject {
    var errorName: String? {
        if case .string(let name)? = self["error"] { name } else { nil }
    }

    var parameters: JSONObject {
        if case .object(let parameters)? = self["parameters"] { parameters } else { [:] }
    }

    var stopwatch: Stopwatch? {
        parameters["stopwatch"].flatMap { try? Stopwatch(json: $0) }
    }
}

extension RawConnection {
    /// The whole `History` of the daemon on `socket`, streamed with `more` on a connection
    /// of its own.
    static func streamedHistory(_ socket: String) throws -> [Interval] {
        let connection = try RawConnection(socket)
        try connection.call("io.stopwatchd.History", "{}", more: true)
        var intervals: [Interval] = []
        while let reply = try connection.reply() {
            guard case .object(let parameters)? = reply["parameters"], case .array(let items)? = parameters["intervals"] else {
                throw Errno(EPROTO)
            }
            intervals += try items.map { try Interval(json: $0) }
            if reply["continues"] != .bool(true) { return intervals }
        }
        throw Errno(ETIMEDOUT)
    }
}
