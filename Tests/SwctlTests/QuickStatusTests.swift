import Glibc
import LinuxSystem
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

    /// The socket the quick path takes for `arguments` in `environment`, with sockets at
    /// `sockets`; nil when it leaves the call to the full client.
    func socketPath(_ arguments: [String], _ environment: [String: String], sockets: Set<String>) -> String? {
        let all = ["swctl"] + arguments
        var pointers = all.map { strdup($0) }
        let values = environment.mapValues { strdup($0)! }
        let userPath = UnsafeMutableRawBufferPointer.allocate(byteCount: 108, alignment: 1)
        defer {
            pointers.forEach { free($0) }
            values.values.forEach { free($0) }
            userPath.deallocate()
        }
        return pointers.withUnsafeMutableBufferPointer { argv in
            guard let call = QuickStatus.Call(argc: Int32(argv.count), argv: argv.baseAddress!) else { return nil }
            let path = call.socketPath(
                environment: { name in
                    let key = String(decoding: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount), as: UTF8.self)
                    return values[key].map { UnsafePointer($0) }
                },
                userPath: userPath, isSocket: { sockets.contains(String(cString: $0)) }
            )
            return path.map { String(cString: $0) }
        }
    }

    @Test("the socket is the full client's, by the same rules, or the call is left to it")
    func socketRules() throws {
        let user = "/run/user/1000/stopwatchd/stopwatchd.sock"
        var checked = 0
        for arguments in [["status", "tea"], ["--socket", "/s/given.sock", "status", "tea"]] {
            for socketVariable in [nil, "", "/s/env.sock", "@abstract", "/s/ü.sock"] as [String?] {
                for runtime in [nil, "", "/run/user/1000", "/" + String(repeating: "r", count: 90), "/run/ü"] as [String?] {
                    for host in [nil, "", "desk"] as [String?] {
                        for tick in [nil, "", "1s", "100ms"] as [String?] {
                            for sockets in [[], [user]] as [Set<String>] {
                                var environment: [String: String] = [:]
                                environment["STOPWATCHD_SOCKET"] = socketVariable
                                environment["XDG_RUNTIME_DIR"] = runtime
                                environment["STOPWATCHD_HOST"] = host
                                environment["STOPWATCHD_TICK"] = tick
                                guard let quick = socketPath(arguments, environment, sockets: sockets) else { continue }
                                // Taken: the full client would use that socket, here, without tenths.
                                guard case .run(let parsed) = try SwctlInvocation.parse(arguments) else {
                                    Issue.record("\(arguments) does not parse as a run")
                                    continue
                                }
                                let processEnvironment = ProcessEnvironment(environment)
                                #expect(try parsed.remoteHost(environment: processEnvironment) == nil, "\(arguments) \(environment)")
                                let full = SocketLocation.clientPath(parsed.socket, environment: processEnvironment, exists: { sockets.contains($0) })
                                #expect(full == quick, "\(arguments) \(environment) \(sockets)")
                                #expect(processEnvironment["STOPWATCHD_TICK"] == nil, "\(environment)")
                                checked += 1
                            }
                        }
                    }
                }
            }
        }
        #expect(checked > 50, "the quick path took \(checked) of the cases")
        // The plainest: no variable at all, the user socket there or not.
        #expect(socketPath(["status"], ["XDG_RUNTIME_DIR": "/run/user/1000"], sockets: [user]) == user)
        #expect(socketPath(["status"], ["XDG_RUNTIME_DIR": "/run/user/1000"], sockets: []) == SocketLocation.systemPath)
        #expect(socketPath(["status"], [:], sockets: []) == SocketLocation.systemPath)
        #expect(socketPath(["status"], ["STOPWATCHD_HOST": "desk"], sockets: []) == nil, "over ssh: the full client")
        #expect(socketPath(["--socket", "/s/x.sock", "status"], ["STOPWATCHD_HOST": "desk"], sockets: []) == "/s/x.sock")
    }

    /// What `receiveMessage` makes of `sent` on a socket, the other end then closed or not.
    func received(_ sent: [UInt8], thenClosed: Bool, wait: Int64 = 2_000) -> QuickStatus.Received {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else { return .other }
        defer {
            close(ends[0])
            if !thenClosed { close(ends[1]) }
        }
        _ = sent.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        if thenClosed { close(ends[1]) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 1)
        defer { buffer.deallocate() }
        return QuickStatus.receiveMessage(ends[0], into: buffer, waitingAtMost: wait)
    }

    @Test("one message, its NUL last, or the full client's turn; no reply in time is told")
    func receiving() {
        #expect(received(Array("{}\0".utf8), thenClosed: false) == .message(3))
        #expect(received(Array("{}\0{}".utf8), thenClosed: false) == .other, "more than one")
        #expect(received(Array("{}".utf8), thenClosed: true) == .other, "closed before its end")
        #expect(received(Array(repeating: UInt8(ascii: "a"), count: 65), thenClosed: false) == .other, "larger than the buffer")
        #expect(received([], thenClosed: false, wait: 50) == .timedOut)
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
