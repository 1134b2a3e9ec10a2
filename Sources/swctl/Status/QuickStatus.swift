import Glibc
import LinuxSystem
import StopwatchProtocol
import StopwatchdClient

/// `swctl [--socket PATH] status [NAME]` of a plain stopwatch, answered before anything else
/// of swctl runs but the check of its standard descriptors (issue 30: `swctl status` within 1.2× of a C client, where an empty Swift
/// program is already 1.11×). A status bar runs it every second.
///
/// It reads argv as C strings, writes the `Get` into a fixed buffer, reads the reply into
/// another, and prints with one `write`: no `String`, no array, no generic type on the way,
/// so none of their runtime metadata is made and none of their code paged in. Only the
/// plainest case is taken: the arguments exactly so (a first-protocol name, an ASCII path),
/// no `STOPWATCHD_TICK` (nor `STOPWATCHD_HOST` without `--socket`), and a reply that is, byte for byte, what the
/// daemon writes for a stopwatch without laps, target, note, cycle or sleep left out
/// (`Stopwatch.getReplyMessage`). Anything else returns having printed nothing, and the full
/// client answers as it always did: a `Get` changes nothing, so asking again costs only a
/// round trip. The line printed is `StatusText.lines`' for that stopwatch
/// (`QuickStatusTests` holds the two side by side over every state and many times).
///
/// Only a daemon that does not answer in time is told from here (as the full client tells it):
/// asking again would make a status bar wait twice as long.
enum QuickStatus {
    /// The full client's wait for a reply (`StopwatchClient.timeout`).
    static let replyWait: Int64 = 10_000

    /// Prints the status line and exits 0 when this is such a call of such a stopwatch;
    /// returns otherwise, having printed nothing.
    static func answerIfPlain(argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) {
        guard let call = Call(argc: argc, argv: argv) else { return }
        let userPath = UnsafeMutableRawBufferPointer.allocate(byteCount: 108, alignment: 1)
        defer { userPath.deallocate() }
        guard let path = call.socketPath(environment: environment, userPath: userPath, isSocket: isSocket) else { return }
        let request = UnsafeMutableRawBufferPointer.allocate(byteCount: 160, alignment: 1)
        let reply = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        let line = UnsafeMutableRawBufferPointer.allocate(byteCount: 160, alignment: 1)
        defer {
            request.deallocate()
            reply.deallocate()
            line.deallocate()
        }
        guard let requestCount = writeRequest(name: call.name, into: request) else { return }
        // Non-blocking: a daemon whose backlog is full would hold a blocking connect; the
        // full client waits for it with a deadline.
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard socket >= 0 else { return }
        defer { close(socket) }
        guard connect(socket, path), sendAll(socket, UnsafeRawBufferPointer(rebasing: request[..<requestCount])) else { return }
        let received: Int
        switch receiveMessage(socket, into: reply) {
        case .message(let count): received = count
        case .other: return
        case .timedOut:
            // The full client's message and status; a reader of standard error gone away
            // is EPIPE for `Diagnostics`, not a death by SIGPIPE.
            Signals.ignoreBrokenPipes()
            let error = ClientError.unreachable(path: String(cString: path), reason: "no reply within \(DurationText.string(.milliseconds(replyWait)))")
            Diagnostics.fail("swctl: \(error.swctlMessage)", status: error.exitStatus)
        }
        guard let lineCount = statusLine(reply: UnsafeRawBufferPointer(rebasing: reply[..<received]), into: line) else { return }
        // A reader gone away is EPIPE, and exit 0 (`writeLine`), not a death by SIGPIPE.
        Signals.ignoreBrokenPipes()
        writeLine(UnsafeRawBufferPointer(rebasing: line[..<lineCount]))
        exit(0)
    }

    /// The call, when it is exactly `[--socket PATH] status [NAME]`.
    struct Call {
        /// The `--socket` path, nil for none.
        var socket: UnsafePointer<CChar>?
        /// The name, nil for the default one.
        var name: UnsafePointer<CChar>?

        init?(argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) {
            var index: Int32 = 1
            if index < argc, QuickStatus.equals(argv[Int(index)], "--socket") {
                guard index + 1 < argc, let path = argv[Int(index) + 1], QuickStatus.isPlainPath(path) else { return nil }
                socket = UnsafePointer(path)
                index += 2
            }
            guard index < argc, QuickStatus.equals(argv[Int(index)], "status") else { return nil }
            index += 1
            if index < argc {
                guard let given = argv[Int(index)], QuickStatus.isPlainName(UnsafePointer(given)) else { return nil }
                name = UnsafePointer(given)
                index += 1
            }
            guard index == argc else { return nil }
        }

        /// The daemon's socket by `SocketLocation.clientPath`'s rules: `--socket`'s path, else
        /// `$STOPWATCHD_SOCKET`, else the user socket if it is one
        /// (`$XDG_RUNTIME_DIR/stopwatchd/stopwatchd.sock`, written into `userPath`), else the
        /// system's. Nil, for the full client, when the tick is set (tenths), for
        /// `$STOPWATCHD_HOST` without `--socket` (the daemon over ssh), and for any path that
        /// is not plain (`isPlainPath`).
        func socketPath(
            environment: (StaticString) -> UnsafePointer<CChar>?, userPath: UnsafeMutableRawBufferPointer,
            isSocket: (UnsafePointer<CChar>) -> Bool
        ) -> UnsafePointer<CChar>? {
            // Empty is none, as `ProcessEnvironment` has it.
            func value(_ variable: StaticString) -> UnsafePointer<CChar>? {
                guard let value = environment(variable), value[0] != 0 else { return nil }
                return value
            }
            guard value("STOPWATCHD_TICK") == nil else { return nil }
            if let socket { return socket }
            guard value("STOPWATCHD_HOST") == nil else { return nil }
            if let path = value("STOPWATCHD_SOCKET") { return QuickStatus.isPlainPath(path) ? path : nil }
            if let runtime = value("XDG_RUNTIME_DIR") {
                var writer = ByteWriter(userPath)
                writer.append(UnsafeRawBufferPointer(start: runtime, count: strlen(runtime)))
                writer.append("/stopwatchd/stopwatchd.sock")
                writer.append(byte: 0)
                guard writer.count != nil else { return nil }
                let path = UnsafePointer(userPath.baseAddress!.assumingMemoryBound(to: CChar.self))
                guard QuickStatus.isPlainPath(path) else { return nil }
                if isSocket(path) { return path }
            }
            return QuickStatus.systemPath
        }
    }

    /// `SocketLocation.systemPath`, as a C string.
    static var systemPath: UnsafePointer<CChar> {
        let path: StaticString = "/run/stopwatchd/stopwatchd.sock"
        return UnsafeRawPointer(path.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// Whether a socket is at `path`, the link itself if it is one (`FileSystem.kind(at:)`).
    static func isSocket(_ path: UnsafePointer<CChar>) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFSOCK
    }

    // MARK: Arguments and environment, as C strings

    static func equals(_ argument: UnsafeMutablePointer<CChar>?, _ word: StaticString) -> Bool {
        guard let argument else { return false }
        return strcmp(argument, UnsafeRawPointer(word.utf8Start).assumingMemoryBound(to: CChar.self)) == 0
    }

    /// `variable`'s value as `getenv` has it (`Call.socketPath` takes an empty one for none).
    static func environment(_ variable: StaticString) -> UnsafePointer<CChar>? {
        guard let value = getenv(UnsafeRawPointer(variable.utf8Start).assumingMemoryBound(to: CChar.self)) else { return nil }
        return UnsafePointer(value)
    }

    /// A name of the first protocol (`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`): valid, printed as
    /// it is, and written in JSON without an escape.
    static func isPlainName(_ name: UnsafePointer<CChar>) -> Bool {
        isPlainName(UnsafeRawBufferPointer(start: name, count: strlen(name)))
    }

    static func isPlainName(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 1, bytes.count <= 64 else { return false }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let isAlphanumeric = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            guard isAlphanumeric || (index > 0 && (byte == 0x2E || byte == 0x5F || byte == 0x2D)) else { return false }
            index += 1
        }
        return true
    }

    /// Printable ASCII that fits `sun_path`, and not `@…` (an abstract name, to the full
    /// client): the full client takes any other path as it does.
    static func isPlainPath(_ path: UnsafePointer<CChar>) -> Bool {
        let count = strlen(path)
        guard count > 0, count < 108, path[0] != 0x40 else { return false }
        let bytes = UnsafeRawBufferPointer(start: path, count: count)
        var index = 0
        while index < count {
            guard bytes[index] >= 0x20, bytes[index] <= 0x7E else { return false }
            index += 1
        }
        return true
    }

    // MARK: The call

    /// `{"method":"io.stopwatchd.Get","parameters":{"name":"NAME"}}` and its NUL (no name:
    /// empty parameters, the default stopwatch); its length.
    static func writeRequest(name: UnsafePointer<CChar>?, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        var writer = ByteWriter(buffer)
        writer.append(#"{"method":"io.stopwatchd.Get","parameters":{"#)
        if let name {
            writer.append(#""name":""#)
            writer.append(UnsafeRawBufferPointer(start: name, count: strlen(name)))
            writer.append(#"""#)
        }
        writer.append("}}")
        writer.append(byte: 0)
        return writer.count
    }

    static func connect(_ socket: Int32, _ path: UnsafePointer<CChar>) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let count = strlen(path)
        guard count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyMemory(from: UnsafeRawBufferPointer(start: path, count: count)) }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    static func sendAll(_ socket: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = send(socket, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    enum Received: Equatable {
        /// One message, its NUL last, this many bytes.
        case message(Int)
        /// None within `replyWait`.
        case timedOut
        /// Closed, failed, or more than the buffer: for the full client.
        case other
    }

    /// The reply, up to and including its NUL, waiting at most `wait` milliseconds for it.
    static func receiveMessage(_ socket: Int32, into buffer: UnsafeMutableRawBufferPointer, waitingAtMost wait: Int64 = replyWait) -> Received {
        let deadline = milliseconds() + wait
        var count = 0
        while true {
            let wait = deadline - milliseconds()
            guard wait > 0 else { return .timedOut }
            var poll = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = Glibc.poll(&poll, 1, Int32(wait))
            if ready < 0, errno == EINTR { continue }
            guard ready >= 0 else { return .other }
            if ready == 0 { return .timedOut }
            guard count < buffer.count else { return .other }
            let read = Glibc.read(socket, buffer.baseAddress! + count, buffer.count - count)
            if read < 0, errno == EINTR || errno == EAGAIN { continue }
            guard read > 0 else { return .other }
            // One message, its NUL last: a NUL before the end is more than one, for the
            // full client.
            var index = count
            count += read
            while index < count - 1 {
                if buffer[index] == 0 { return .other }
                index += 1
            }
            if buffer[count - 1] == 0 { return .message(count) }
        }
    }

    static func milliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    // MARK: The reply and the line

    /// `NAME STATE H:MM:SS` and a newline, `StatusText.lines`' one line for the stopwatch in
    /// `reply` when it is a plain one as the daemon writes it; its length. Nil for anything
    /// else: an error, laps, a target, a note, a cycle, sleep left out, another order.
    static func statusLine(reply: UnsafeRawBufferPointer, into line: UnsafeMutableRawBufferPointer) -> Int? {
        var reader = ByteReader(reply)
        guard reader.skip(#"{"parameters":{"stopwatch":{"name":""#) else { return nil }
        let nameStart = reader.offset
        guard let nameEnd = reader.offsetOf(byte: 0x22) else { return nil }
        let name = UnsafeRawBufferPointer(rebasing: reply[nameStart..<nameEnd])
        guard isPlainName(name) else { return nil }
        reader.offset = nameEnd
        guard reader.skip(#"","state":""#) else { return nil }
        let state: StaticString
        if reader.skip(#"stopped""#) {
            state = "stopped"
        } else if reader.skip(#"counting""#) {
            state = "counting"
        } else if reader.skip(#"pause""#) {
            state = "paused"
        } else {
            return nil
        }
        guard reader.skip(#","elapsed_ms":"#), let elapsed = reader.digits(atMost: 18) else { return nil }
        guard reader.skip(#","laps_ms":[]}}}"#), reader.skip(byte: 0), reader.isAtEnd else { return nil }
        var writer = ByteWriter(line)
        writer.append(name)
        writer.append(byte: 0x20)
        writer.append(state)
        writer.append(byte: 0x20)
        // `ElapsedText.string(milliseconds:tenths: false)`: hours neither padded nor capped.
        let seconds = elapsed / 1000
        writer.append(decimal: seconds / 3600)
        writer.append(byte: 0x3A)
        writer.append(twoDigits: seconds / 60 % 60)
        writer.append(byte: 0x3A)
        writer.append(twoDigits: seconds % 60)
        writer.append(byte: 0x0A)
        return writer.count
    }

    /// Writes `line` to standard output whole; a reader gone away is exit 0, as for `Output`.
    static func writeLine(_ line: UnsafeRawBufferPointer) {
        var written = 0
        while written < line.count {
            let count = write(STDOUT_FILENO, line.baseAddress! + written, line.count - written)
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EPIPE { CurrentProcess.exitAtOnce(0) }
            guard count > 0 else {
                Diagnostics.fail("swctl: cannot write output: \(Errno(errno))", status: 1)
            }
            written += count
        }
    }
}

/// Bytes appended to a fixed buffer; past its end nothing more is written, and `count` is
/// nil.
struct ByteWriter {
    let buffer: UnsafeMutableRawBufferPointer
    private var used = 0
    private var overflowed = false

    init(_ buffer: UnsafeMutableRawBufferPointer) {
        self.buffer = buffer
    }

    var count: Int? { overflowed ? nil : used }

    mutating func append(byte: UInt8) {
        guard used < buffer.count else {
            overflowed = true
            return
        }
        buffer[used] = byte
        used += 1
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        while index < bytes.count {
            append(byte: bytes[index])
            index += 1
        }
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(decimal value: Int64) {
        var divisor: Int64 = 1
        while value / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            append(byte: 0x30 + UInt8(truncatingIfNeeded: value / divisor % 10))
            divisor /= 10
        }
    }

    mutating func append(twoDigits value: Int64) {
        append(byte: 0x30 + UInt8(truncatingIfNeeded: value / 10 % 10))
        append(byte: 0x30 + UInt8(truncatingIfNeeded: value % 10))
    }
}

/// Bytes read from the front of a buffer.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { offset == bytes.count }

    /// Steps over `text` if the bytes go on with it.
    mutating func skip(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count - offset >= count, memcmp(bytes.baseAddress! + offset, text.utf8Start, count) == 0 else { return false }
        offset += count
        return true
    }

    mutating func skip(byte: UInt8) -> Bool {
        guard offset < bytes.count, bytes[offset] == byte else { return false }
        offset += 1
        return true
    }

    /// Where `byte` next is, from `offset` on.
    func offsetOf(byte: UInt8) -> Int? {
        var index = offset
        while index < bytes.count {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    /// A run of 1 to `limit` decimal digits, without a sign or a leading zero (JSON's form).
    mutating func digits(atMost limit: Int) -> Int64? {
        var value: Int64 = 0
        let start = offset
        while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 {
            guard offset - start < limit else { return nil }
            value = value * 10 + Int64(bytes[offset] - 0x30)
            offset += 1
        }
        guard offset > start, bytes[start] != 0x30 || offset - start == 1 else { return nil }
        return value
    }
}
