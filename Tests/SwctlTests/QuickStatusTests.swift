import Glibc
import StopwatchProtocol
import Testing
import Varlink

@testable import swctl

/// `swctl status`'s quick path (`QuickStatus`) against the full client's output
/// (`StatusText.lines`): for every plain stopwatch the daemon can reply with, the same line,
/// byte for byte; for anything else, nothing (the full client answers).
@Suite("swctl status: the quick path")
struct QuickStatusTests {
    /// The quick path's line for `reply`, nil when it leaves it to the full client.
    func quickLine(_ reply: [UInt8]) -> String? {
        let line = UnsafeMutableRawBufferPointer.allocate(byteCount: 160, alignment: 1)
        defer { line.deallocate() }
        return reply.withUnsafeBytes { reply in
            QuickStatus.statusLine(reply: reply, into: line).map { String(decoding: UnsafeRawBufferPointer(rebasing: line[..<$0]), as: UTF8.self) }
        }
    }

    /// What the full client prints for `stopwatch` (`swctl status`, no tick set).
    func fullOutput(_ stopwatch: Stopwatch) -> String {
        StatusText.lines(for: stopwatch, tenths: false).map { $0 + "\n" }.joined()
    }

    static let elapsed: [Int64] = [
        0, 1, 999, 1_000, 9_999, 59_999, 60_000, 599_999, 3_599_999, 3_600_000, 35_999_999, 36_000_000,
        359_999_999, 360_000_000, 86_400_000 * 366, 999_999_999_999_999_999,
    ]

    @Test("every state and many elapsed times: the full client's line, byte for byte", arguments: [Stopwatch.State.stopped, .counting, .pause])
    func plainStopwatches(_ state: Stopwatch.State) {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<500).map { _ in Int64.random(in: 0...999_999_999_999_999_999, using: &generator) }
        for name in ["default", "a", "Tea_2.b-c", String(repeating: "x", count: 64)] {
            for elapsedMs in Self.elapsed + random {
                let stopwatch = Stopwatch(name: name, state: state, elapsedMs: elapsedMs, lapsMs: [])
                #expect(quickLine(stopwatch.getReplyMessage) == fullOutput(stopwatch), "\(name) \(state) \(elapsedMs)")
            }
        }
    }

    @Test("anything but a plain stopwatch is left to the full client")
    func othersLeft() throws {
        let plain = Stopwatch(name: "tea", state: .counting, elapsedMs: 1_000, lapsMs: [])
        var others: [Stopwatch] = []
        var lapped = plain
        lapped.lapsMs = [500]
        others.append(lapped)
        var countdown = plain
        countdown.targetMs = 60_000
        others.append(countdown)
        var awake = plain
        awake.countsSleep = false
        others.append(awake)
        var noted = plain
        noted.note = "chapter 3"
        others.append(noted)
        for name in ["café", "a b", "-x", ".hidden", String(repeating: "x", count: 65), "tab\there"] {
            var named = plain
            named.name = name
            others.append(named)
        }
        for stopwatch in others {
            #expect(quickLine(stopwatch.getReplyMessage) == nil, "\(stopwatch.json.text)")
        }
        let good = plain.getReplyMessage
        let bad: [[UInt8]] = [
            VarlinkReply(VarlinkError.invalidParameter("name")).message,
            Array(good.dropLast()),  // no NUL
            good + [0],  // something after it
            replaced(good, ":1000,", ":01000,"),
            replaced(good, ":1000,", ":-1000,"),
            replaced(good, ":1000,", ":1000000000000000000,"),
            replaced(good, "counting", "running"),
            replaced(good, "{\"name\"", "{ \"name\""),
            [],
        ]
        #expect(quickLine(good) == "tea counting 0:00:01\n")
        for reply in bad {
            #expect(quickLine(reply) == nil, "\(String(decoding: reply, as: UTF8.self))")
        }
    }

    /// `Call` of `arguments` (after `swctl`), as the quick path reads argv.
    func call(_ arguments: [String]) -> (socket: String?, name: String?)? {
        let all = ["swctl"] + arguments
        var pointers = all.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeMutableBufferPointer { argv in
            QuickStatus.Call(argc: Int32(argv.count), argv: argv.baseAddress!).map { call in
                (call.socket.map { String(cString: $0) }, call.name.map { String(cString: $0) })
            }
        }
    }

    @Test("only `[--socket PATH] status [NAME]` is taken")
    func arguments() {
        #expect(call(["status"]).map { [$0.socket, $0.name] } == [nil, nil])
        #expect(call(["status", "tea"]).map { [$0.socket, $0.name] } == [nil, "tea"])
        #expect(call(["--socket", "/run/x.sock", "status", "tea"]).map { [$0.socket, $0.name] } == ["/run/x.sock", "tea"])
        for arguments in [
            [], ["list"], ["status", "tea", "more"], ["--json", "status"], ["status", "--json"], ["--user", "status"],
            ["--host", "desk", "status"], ["--socket", "status"], ["--socket", "", "status"], ["--socket", "/tmp/ü.sock", "status"],
            ["--socket", "/" + String(repeating: "s", count: 120), "status"], ["status", "café"], ["status", "--help"],
            ["status", "-x"], ["status", ""], ["stat"], ["status", "tea", "--socket", "/x"],
        ] {
            #expect(call(arguments) == nil, "\(arguments)")
        }
    }

    @Test("the request is a Get of the name, or of the default one")
    func request() throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 160, alignment: 1)
        defer { buffer.deallocate() }
        for name in ["tea", nil] as [String?] {
            let count = try #require(name.withCString { QuickStatus.writeRequest(name: $0, into: buffer) })
            let bytes = Array(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            #expect(bytes.last == 0)
            let call = try VarlinkCall(message: Array(bytes.dropLast()))
            #expect(call.method == "io.stopwatchd.Get")
            #expect(call.parameters["name"] == name.map { .string($0) })
        }
        let long = String(repeating: "x", count: 64)
        #expect(long.withCString { QuickStatus.writeRequest(name: $0, into: buffer) } != nil)
    }
}

/// `bytes` with the first `target` replaced (no Foundation here).
private func replaced(_ bytes: [UInt8], _ target: String, _ replacement: String) -> [UInt8] {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let range = text.firstRange(of: target) else { return bytes }
    return Array((text[..<range.lowerBound] + replacement + text[range.upperBound...]).utf8)
}

extension Optional where Wrapped == String {
    /// `body` with this string as a C string, or with nil.
    fileprivate func withCString<Result>(_ body: (UnsafePointer<CChar>?) throws -> Result) rethrows -> Result {
        switch self {
        case .some(let string): try string.withCString { try body($0) }
        case .none: try body(nil)
        }
    }
}
