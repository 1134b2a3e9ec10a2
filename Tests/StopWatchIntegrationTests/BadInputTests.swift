import Foundation
import StopWatchCore
import StopwatchDaemon
import StopwatchProtocol
import StopwatchdClient
import Testing

/// Every kind of bad input SPEC §3 names, each on a fresh connection to its own daemon: the right answer (an
/// error, or ProtocolError and a close), the daemon still serving, and nothing stored changed.
@Suite("bad input, table-driven")
struct BadInputTests {
    enum Expected: Sendable, CustomStringConvertible {
        /// This error, and the connection stays usable.
        case error(String)
        /// ProtocolError, then the daemon closes.
        case protocolError
        /// No reply at all: a following call on the same connection is answered first.
        case noReply
        /// A normal reply (the input is odd but valid).
        case success
        /// The daemon closes without a word (the client ended mid-message).
        case silentClose

        var description: String {
            switch self {
            case .error(let name): "error \(name)"
            case .protocolError: "ProtocolError and close"
            case .noReply: "no reply"
            case .success: "success"
            case .silentClose: "close"
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let label: String
        let bytes: [UInt8]
        let expected: Expected
        var endsInput = false

        init(_ label: String, _ text: String, _ expected: Expected, terminated: Bool = true, endsInput: Bool = false) {
            self.label = label
            self.bytes = Array(text.utf8) + (terminated ? [0] : [])
            self.expected = expected
            self.endsInput = endsInput
        }

        init(_ label: String, bytes: [UInt8], _ expected: Expected) {
            self.label = label
            self.bytes = bytes
            self.expected = expected
        }

        var testDescription: String { "\(label) → \(expected)" }
    }

    static func call(_ method: String, _ parameters: String) -> String {
        #"{"method":"\#(method)","parameters":\#(parameters)}"#
    }

    /// A Start of a name holding `raw` bytes, which are not always UTF-8.
    static func named(_ raw: [UInt8]) -> [UInt8] {
        Array(#"{"method":"io.stopwatchd.Start","parameters":{"name":""#.utf8) + raw + Array(#""}}"#.utf8) + [0]
    }

    static let invalidName = "io.stopwatchd.InvalidName"
    static let invalidParameter = "org.varlink.service.InvalidParameter"

    static let cases: [Case] = [
        Case("not JSON", "hello", .protocolError),
        Case("JSON array", "[1,2,3]", .protocolError),
        Case("JSON string", #""Start""#, .protocolError),
        Case("JSON number", "42", .protocolError),
        Case("JSON null", "null", .protocolError),
        Case("empty message", "", .protocolError),
        Case("truncated JSON, then end of input", #"{"method":"io.stopwatchd.St"#, .silentClose, terminated: false, endsInput: true),
        Case("trailing garbage", #"{"method":"io.stopwatchd.Get"} x"#, .protocolError),
        Case("a comment", #"{"method":"io.stopwatchd.Get"} // hi"#, .protocolError),
        Case("duplicate keys", #"{"method":"io.stopwatchd.Get","method":"io.stopwatchd.Start"}"#, .protocolError),
        Case("byte-order mark", "\u{FEFF}" + #"{"method":"io.stopwatchd.Get"}"#, .protocolError),
        Case("100,000 nested arrays", String(repeating: "[", count: 100_000), .protocolError),
        Case("invalid UTF-8", bytes: Array(#"{"method":"io.stopwatchd.Get","parameters":{"name":""#.utf8) + [0xC3, 0x28] + Array(#""}}"#.utf8) + [0], .protocolError),
        Case("NUL inside a string ends the message early", bytes: Array(#"{"method":"io.stopwatchd.Get","parameters":{"name":"a"#.utf8) + [0] + Array(#"b"}}"#.utf8) + [0], .protocolError),
        Case("number too large for a double", call("io.stopwatchd.Get", #"{"name":1e999}"#), .protocolError),
        Case("huge integer as a name", call("io.stopwatchd.Get", #"{"name":123456789012345678901234567890}"#), .error(invalidParameter)),
        Case("name is a number", call("io.stopwatchd.Start", #"{"name":7}"#), .error(invalidParameter)),
        Case("name is a boolean", call("io.stopwatchd.Stop", #"{"name":true}"#), .error(invalidParameter)),
        Case("name is an array", call("io.stopwatchd.Reset", #"{"name":["a"]}"#), .error(invalidParameter)),
        Case("name is an object", call("io.stopwatchd.Lap", #"{"name":{}}"#), .error(invalidParameter)),
        Case("Remove with a null name", call("io.stopwatchd.Remove", #"{"name":null}"#), .error(invalidParameter)),
        Case("Remove without a name", call("io.stopwatchd.Remove", "{}"), .error(invalidParameter)),
        Case("interface is a number", call("org.varlink.service.GetInterfaceDescription", #"{"interface":5}"#), .error(invalidParameter)),
        Case("interface missing", call("org.varlink.service.GetInterfaceDescription", "{}"), .error(invalidParameter)),
        Case("parameters is a string", #"{"method":"io.stopwatchd.Get","parameters":"x"}"#, .protocolError),
        Case("method is a number", #"{"method":5}"#, .protocolError),
        Case("method missing", #"{"parameters":{}}"#, .protocolError),
        Case("more is a string", #"{"method":"io.stopwatchd.Get","more":"yes"}"#, .protocolError),
        Case("oneway is a number", #"{"method":"io.stopwatchd.Get","oneway":1}"#, .protocolError),
        Case("unknown method", call("io.stopwatchd.Explode", "{}"), .error("org.varlink.service.MethodNotFound")),
        Case("unknown interface", call("com.example.Thing.Do", "{}"), .error("org.varlink.service.InterfaceNotFound")),
        Case("method without interface", call("Get", "{}"), .error("org.varlink.service.InterfaceNotFound")),
        Case("empty method", call("", "{}"), .error("org.varlink.service.InterfaceNotFound")),
        Case("empty name", call("io.stopwatchd.Start", #"{"name":""}"#), .error(invalidName)),
        Case("name of 65 characters", call("io.stopwatchd.Start", #"{"name":"\#(String(repeating: "n", count: 65))"}"#), .error(invalidName)),
        Case("name with a slash", call("io.stopwatchd.Start", #"{"name":"../etc"}"#), .error(invalidName)),
        Case("name ..", call("io.stopwatchd.Start", #"{"name":".."}"#), .error(invalidName)),
        Case("name with a space (valid)", call("io.stopwatchd.Get", #"{"name":"client call"}"#), .success),
        Case("name with a control character", call("io.stopwatchd.Start", #"{"name":"a\u0001"}"#), .error(invalidName)),
        Case("name with an escaped NUL", call("io.stopwatchd.Start", #"{"name":"a\u0000"}"#), .error(invalidName)),
        Case("non-ASCII name (valid)", call("io.stopwatchd.Get", #"{"name":"café タイマー"}"#), .success),
        Case("name starting with a dash (valid)", call("io.stopwatchd.Get", #"{"name":"-x"}"#), .success),
        Case("name .", call("io.stopwatchd.Start", #"{"name":"."}"#), .error(invalidName)),
        Case("Remove of .", call("io.stopwatchd.Remove", #"{"name":"."}"#), .error(invalidName)),
        Case("name a/b", call("io.stopwatchd.Start", #"{"name":"a/b"}"#), .error(invalidName)),
        Case("name with a leading space", call("io.stopwatchd.Start", #"{"name":" a"}"#), .error(invalidName)),
        Case("name with a trailing space", call("io.stopwatchd.Start", #"{"name":"a "}"#), .error(invalidName)),
        Case("name with a leading NBSP", call("io.stopwatchd.Start", "{\"name\":\"\u{A0}a\"}"), .error(invalidName)),
        Case("name with a trailing escaped NBSP", call("io.stopwatchd.Start", #"{"name":"a\u00a0"}"#), .error(invalidName)),
        Case("name with NEL (U+0085, C1)", call("io.stopwatchd.Start", "{\"name\":\"a\u{85}b\"}"), .error(invalidName)),
        Case("name with an escaped NEL", call("io.stopwatchd.Start", #"{"name":"a\u0085b"}"#), .error(invalidName)),
        Case("name with DEL", call("io.stopwatchd.Start", #"{"name":"a\u007fb"}"#), .error(invalidName)),
        Case("name of 65 four-byte scalars", call("io.stopwatchd.Start", #"{"name":"\#(String(repeating: "😀", count: 65))"}"#), .error(invalidName)),
        Case("name of 64 four-byte scalars (valid)", call("io.stopwatchd.Get", #"{"name":"\#(String(repeating: "😀", count: 64))"}"#), .success),
        Case("escaped surrogate pair (valid: 😀)", call("io.stopwatchd.Get", #"{"name":"\uD83D\uDE00"}"#), .success),
        Case("escaped lone high surrogate", call("io.stopwatchd.Start", #"{"name":"a\uD800"}"#), .protocolError),
        Case("escaped lone low surrogate", call("io.stopwatchd.Start", #"{"name":"\uDC00a"}"#), .protocolError),
        Case("escaped surrogates reversed", call("io.stopwatchd.Start", #"{"name":"\uDE00\uD83D"}"#), .protocolError),
        Case("overlong UTF-8 '/' (C0 AF)", bytes: named([0xC0, 0xAF]), .protocolError),
        Case("overlong UTF-8, 3 bytes (E0 80 AF)", bytes: named([0x61, 0xE0, 0x80, 0xAF]), .protocolError),
        Case("UTF-8-encoded surrogate (ED A0 80)", bytes: named([0x61, 0xED, 0xA0, 0x80]), .protocolError),
        Case("truncated UTF-8 sequence", bytes: named([0xE3, 0x82, 0x61]), .protocolError),
        Case("byte F5", bytes: named([0x61, 0xF5, 0x80, 0x80, 0x80]), .protocolError),
        Case("byte FF", bytes: named([0xFF]), .protocolError),
        Case("Countdown of 0 ms", call("io.stopwatchd.Countdown", #"{"name":"keep","target_ms":0}"#), .error(invalidParameter)),
        Case("Countdown of a negative time", call("io.stopwatchd.Countdown", #"{"name":"keep","target_ms":-5}"#), .error(invalidParameter)),
        Case("Countdown of 366 days + 1 ms", call("io.stopwatchd.Countdown", #"{"name":"keep","target_ms":31622400001}"#), .error(invalidParameter)),
        Case("Countdown of the largest integer", call("io.stopwatchd.Countdown", #"{"name":"keep","target_ms":9223372036854775807}"#), .error(invalidParameter)),
        Case("Countdown of a fraction", call("io.stopwatchd.Countdown", #"{"name":"keep","target_ms":1.5}"#), .error(invalidParameter)),
        Case("Countdown of a string", call("io.stopwatchd.Countdown", #"{"name":"keep","target_ms":"25m"}"#), .error(invalidParameter)),
        Case("Countdown without a target", call("io.stopwatchd.Countdown", #"{"name":"keep"}"#), .error(invalidParameter)),
        Case("SetTarget of 0 ms on a new name", call("io.stopwatchd.SetTarget", #"{"name":"new","target_ms":0}"#), .error(invalidParameter)),
        Case("SetTarget of a boolean", call("io.stopwatchd.SetTarget", #"{"name":"held","target_ms":true}"#), .error(invalidParameter)),
        Case("Reset while counting", call("io.stopwatchd.Reset", #"{"name":"keep"}"#), .error("io.stopwatchd.InvalidTransition")),
        Case("Lap while paused", call("io.stopwatchd.Lap", #"{"name":"held"}"#), .error("io.stopwatchd.InvalidTransition")),
        Case("Watch without more", call("io.stopwatchd.Watch", "{}"), .error("org.varlink.service.ExpectedMore")),
        Case("Watch with more false", #"{"method":"io.stopwatchd.Watch","more":false}"#, .error("org.varlink.service.ExpectedMore")),
        Case("Watch with more and oneway", #"{"method":"io.stopwatchd.Watch","more":true,"oneway":true}"#, .noReply),
        Case("oneway with a bad name", #"{"method":"io.stopwatchd.Start","parameters":{"name":"a/b"},"oneway":true}"#, .noReply),
        Case("oneway unknown method", #"{"method":"io.stopwatchd.Nope","oneway":true}"#, .noReply),
        Case("more on a plain method", #"{"method":"io.stopwatchd.Get","more":true}"#, .success),
        Case("null parameters", #"{"method":"io.stopwatchd.Get","parameters":null}"#, .success),
        Case("unknown extra field", #"{"method":"io.stopwatchd.Get","upgrade":false,"x":1}"#, .success),
        Case("a good call then a bad one in one write", bytes: Array(call("io.stopwatchd.Get", "{}").utf8) + [0] + Array("nope".utf8) + [0], .protocolError),
        Case("a bad message then a good call in one write", bytes: Array("nope".utf8) + [0] + Array(call("io.stopwatchd.List", "{}").utf8) + [0], .protocolError),
        Case("64 KiB + 1 bytes without an end", bytes: Array(repeating: UInt8(ascii: " "), count: 64 * 1024 + 1), .protocolError),
        Case("a message never finished (timeout)", #"{"method":"io.stopwatchd.Get""#, .protocolError, terminated: false),
    ]

    /// A daemon with a counting and a paused stopwatch, and what it lists before any input.
    static func daemonWithState() throws -> (TestDirectory, DaemonProcess, [Stopwatch]) {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--message-timeout", "500ms"])
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("keep")
        _ = try client.start("held")
        _ = try client.lap("held")
        _ = try client.stop("held")
        return (directory, daemon, try client.list())
    }

    @Test("the table has at least 40 distinct cases")
    func enoughCases() {
        #expect(Self.cases.count >= 40)
        #expect(Set(Self.cases.map(\.label)).count == Self.cases.count)
    }

    @Test("each bad input gets its answer; the daemon serves on; nothing stored changes", arguments: cases)
    func badInput(_ input: Case) throws {
        let (directory, daemon, before) = try Self.daemonWithState()
        defer { withExtendedLifetime(directory) {} }
        let socket = daemon.socket
        let connection = try RawConnection(socket)
        try? connection.send(input.bytes)
        if input.endsInput { connection.finishSending() }

        switch input.expected {
        case .error(let name):
            #expect(try connection.reply()?.errorName == name)
            try connection.call("io.stopwatchd.Get", #"{"name":"keep"}"#)
            #expect(try connection.reply()?.stopwatch?.state == .counting, "the connection stays usable")
        case .protocolError:
            let reply = try connection.reply(where: { $0.errorName != nil })
            #expect(reply?.errorName == "io.stopwatchd.ProtocolError")
            // The error is the last word: calls sent after the bad message are not answered.
            #expect(try connection.reply() == nil, "a reply after ProtocolError")
            #expect(connection.isClosedByPeer)
        case .noReply:
            try connection.call("io.stopwatchd.Get", #"{"name":"keep"}"#)
            #expect(try connection.reply()?.stopwatch?.name == "keep", "the next call's reply comes first")
        case .success:
            let reply = try #require(try connection.reply())
            #expect(reply.errorName == nil)
        case .silentClose:
            #expect(try connection.closesByPeer())
        }

        // The daemon serves a normal client, and what it keeps is as it was.
        let client = StopwatchClient(socketPath: socket)
        let now = try client.list()
        #expect(now.map(\.name) == before.map(\.name))
        #expect(now.first { $0.name == "held" } == before.first { $0.name == "held" })
        #expect(now.first { $0.name == "keep" }?.state == .counting)
    }

    // MARK: Names as people write them, kept and restored

    static func stopwatchFiles(of directory: TestDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: DaemonProcess.stateDirectory(for: directory.socket) + "/stopwatches")
            .filter { !$0.hasPrefix(".") }.sorted()
    }

    @Test("names differing only by normalization are two stopwatches, in two files, after a restart too")
    func normalization() throws {
        let directory = try TestDirectory()
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        var daemon = try DaemonProcess(socket: directory.socket)
        let client = StopwatchClient(socketPath: directory.socket)
        _ = try client.start(nfc)
        _ = try client.start(nfd)
        _ = try client.stop(nfd)
        func check() throws {
            let listed = try client.list()
            // In byte order: "cafe\u{301}" (65 CC 81) before "café" (C3 A9).
            #expect(listed.map { Array($0.name.utf8) } == [Array(nfd.utf8), Array(nfc.utf8)])
            #expect(listed.map(\.state) == [.pause, .counting])
        }
        try check()
        #expect(try Self.stopwatchFiles(of: directory) == ["caf%C3%A9.json", "cafe%CC%81.json"])
        #expect(daemon.stop() == 0)

        daemon = try DaemonProcess(socket: directory.socket)
        try check()
        try client.remove(nfd)
        #expect(try client.list().map { Array($0.name.utf8) } == [Array(nfc.utf8)])
        #expect(try Self.stopwatchFiles(of: directory) == ["caf%C3%A9.json"])
        withExtendedLifetime(daemon) {}
    }

    @Test("64 four-byte scalars: a cut and hashed file name, restored whole")
    func longestName() throws {
        let directory = try TestDirectory()
        let name = String(repeating: "😀", count: 64)
        let sibling = String(repeating: "😀", count: 63) + "😁"
        var daemon = try DaemonProcess(socket: directory.socket)
        let client = StopwatchClient(socketPath: directory.socket)
        _ = try client.start(name)
        _ = try client.lap(name)
        _ = try client.start(sibling)
        let files = try Self.stopwatchFiles(of: directory)
        #expect(files.count == 2)
        #expect(files.allSatisfy { $0.contains("~") && $0.utf8.count <= 205 })
        #expect(daemon.stop() == 0)

        daemon = try DaemonProcess(socket: directory.socket)
        let listed = try client.list()
        #expect(listed.map { Array($0.name.utf8) } == [Array(name.utf8), Array(sibling.utf8)])
        #expect(listed.first?.lapsMs.count == 1)
        withExtendedLifetime(daemon) {}
    }

    @Test("a state file of a first-protocol name loads unchanged, and is written under the same name")
    func oldFileName() throws {
        let directory = try TestDirectory()
        let stopwatches = DaemonProcess.stateDirectory(for: directory.socket) + "/stopwatches"
        try FileManager.default.createDirectory(atPath: stopwatches, withIntermediateDirectories: true)
        let record = StopwatchRecord(name: "tea.break_1-x", snapshot: .paused(at: .milliseconds(1_234), laps: []), at: ClockReading.now())
        #expect(FileManager.default.createFile(atPath: stopwatches + "/tea.break_1-x.json", contents: Data(record.json.serialized)))
        let daemon = try DaemonProcess(socket: directory.socket)
        let client = StopwatchClient(socketPath: directory.socket)
        let listed = try client.list()
        #expect(listed.map(\.name) == ["tea.break_1-x"])
        #expect(listed.first?.state == .pause)
        #expect(listed.first?.elapsedMs == 1_234)
        _ = try client.start("tea.break_1-x")
        #expect(try Self.stopwatchFiles(of: directory) == ["tea.break_1-x.json"])
        withExtendedLifetime(daemon) {}
    }
}
