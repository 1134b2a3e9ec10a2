import Foundation
import StopwatchdClient
import Testing
import Varlink

/// Bad input and bad clients: answered, closed, and never felt by the others.
@Suite("robustness against bad clients")
struct RobustnessTests {
    @Test("malformed input: ProtocolError, then close; other clients keep working", arguments: [
        "not json", "[1,2,3]", "\"just a string\"", "{\"method\":", "{\"method\":5}", "{\"parameters\":{}}",
        "{\"method\":\"io.stopwatchd.Get\",\"parameters\":[]}", "{\"method\":\"io.stopwatchd.Get\",\"more\":\"yes\"}",
        String(repeating: "[", count: 100_000),
    ])
    func malformed(input: String) throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let bystander = try RawConnection(daemon.socket)
        try bystander.call("io.stopwatchd.Start")
        _ = try bystander.reply()

        let bad = try RawConnection(daemon.socket)
        try bad.send(input)
        let reply = try #require(try bad.reply())
        #expect(reply.errorName == "io.stopwatchd.ProtocolError")
        #expect(try bad.closesByPeer())

        try bystander.call("io.stopwatchd.Get")
        #expect(try bystander.reply()?.stopwatch?.state == .counting)
    }

    @Test("a message over the size limit: ProtocolError and close, before the whole of it arrives")
    func oversized() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let bad = try RawConnection(daemon.socket)
        // 64 KiB + 1 with no NUL: over the limit without ever ending.
        try? bad.send(Array(repeating: UInt8(ascii: " "), count: 64 * 1024 + 1))
        #expect(try bad.reply()?.errorName == "io.stopwatchd.ProtocolError")
        #expect(try bad.closesByPeer())
        // Exactly at the limit is fine.
        let fine = try RawConnection(daemon.socket)
        let call = #"{"method":"io.stopwatchd.Get"}"#
        try fine.send(call + String(repeating: " ", count: 64 * 1024 - call.utf8.count))
        #expect(try fine.reply()?.stopwatch?.name == "default")
    }

    @Test("a message left unfinished: ProtocolError and close after the message timeout")
    func unfinished() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--message-timeout", "300ms"])
        let slow = try RawConnection(daemon.socket)
        try slow.send(#"{"method":"io.stopwatchd.G"#, terminated: false)
        let reply = try #require(try slow.reply(timeout: .seconds(20)))
        #expect(reply.errorName == "io.stopwatchd.ProtocolError")
        #expect(try slow.closesByPeer())
    }

    @Test("several messages in one write, and one message in single-byte writes")
    func framing() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let connection = try RawConnection(daemon.socket)
        let calls = ["Start", "Lap", "Stop"].map { #"{"method":"io.stopwatchd.\#($0)"}"# }
        try connection.send(Array(calls.joined(separator: "\0").utf8) + [0])
        #expect(try connection.reply()?.stopwatch?.state == .counting)
        #expect(try connection.reply()?.stopwatch?.lapsMs.count == 1)
        #expect(try connection.reply()?.stopwatch?.state == .pause)
        for byte in Array(#"{"method":"io.stopwatchd.Get"}"#.utf8) + [0] { try connection.send([byte]) }
        #expect(try connection.reply()?.stopwatch?.state == .pause)
    }

    @Test("a watcher that never reads delays nobody, and is cut off after the write timeout")
    func watcherThatNeverReads() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "10ms", "--write-timeout", "2s"])
        let client = StopwatchClient(socketPath: daemon.socket)
        // Many fast stopwatches, all watched by one connection that never reads: its socket fills.
        let names = (0..<50).map { "flood\($0)" }
        for name in names { _ = try client.start(name) }
        // Each watched by a connection that never reads: their sockets fill.
        let stuck = try names.map { name in
            let connection = try RawConnection(daemon.socket)
            try connection.call("io.stopwatchd.Watch", #"{"name":"\#(name)"}"#, more: true)
            return connection
        }

        let healthy = try RawConnection(daemon.socket)
        try healthy.call("io.stopwatchd.Watch", #"{"name":"flood0"}"#, more: true)
        var previous = ContinuousClock.now
        var longestGap = Duration.zero
        var updates = 0
        let end = ContinuousClock.now + .seconds(1.5)
        while ContinuousClock.now < end, try healthy.reply() != nil {
            longestGap = max(longestGap, ContinuousClock.now - previous)
            previous = ContinuousClock.now
            updates += 1
        }
        #expect(updates > 20)
        // A watcher held up by the stuck ones would wait for their write timeout (2 s); with the
        // rest of the suite beside it (under a sanitizer most), a tick is sometimes just late.
        #expect(longestGap < (Binaries.sanitized ? .milliseconds(1500) : .seconds(1)))
        #expect(try client.get("flood1").state == .counting)
        // The stuck clients are disconnected once they have taken nothing for the write timeout.
        for connection in stuck { #expect(try connection.hangsUp(timeout: .seconds(30))) }
        #expect(daemon.waitForLog(containing: "read nothing for 2s"))
    }

    @Test("over the connection limit: refused with a reason, and the daemon keeps serving")
    func connectionLimit() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--max-connections", "5"])
        let held = try (0..<4).map { _ in try RawConnection(daemon.socket) }
        for connection in held {
            try connection.call("io.stopwatchd.Get")
            _ = try connection.reply()
        }
        // The readiness probe's connection may not be gone yet: wait for one refusal.
        var extra: [RawConnection] = []
        var refusal: JSONObject?
        Deadline.wait {
            guard let connection = try? RawConnection(daemon.socket) else { return false }
            extra.append(connection)
            if let reply = try? connection.reply(timeout: .milliseconds(200)), reply.errorName != nil {
                refusal = reply
                return true
            }
            return false
        }
        #expect(refusal?.errorName == "io.stopwatchd.ProtocolError")
        try held[0].call("io.stopwatchd.Start")
        #expect(try held[0].reply()?.stopwatch?.state == .counting)
    }
}
