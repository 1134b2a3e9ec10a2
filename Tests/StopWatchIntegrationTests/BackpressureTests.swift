import Foundation
import StopwatchdClient
import Testing

/// What one connection may make the daemon do: bounded, in order, and fair to the others.
@Suite("connections under pressure")
struct BackpressureTests {
    @Test("a thousand calls in one write are all answered, in order, without the daemon buffering them all")
    func pipelinedCalls() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let client = StopwatchClient(socketPath: daemon.socket)
        for index in 0..<50 { _ = try client.start("s\(index)") }
        let connection = try RawConnection(daemon.socket)
        let calls = (0..<1000).map { index in
            index.isMultiple(of: 10) ? #"{"method":"io.stopwatchd.Get","parameters":{"name":"s\#(index / 10 % 50)"}}"# : #"{"method":"io.stopwatchd.List"}"#
        }
        try connection.send(Array(calls.joined(separator: "\0").utf8) + [0])
        for index in 0..<1000 {
            let reply = try #require(try connection.reply(), "reply \(index)")
            if index.isMultiple(of: 10) {
                #expect(reply.stopwatch?.name == "s\(index / 10 % 50)")
            } else if case .array(let items)? = reply.parameters["stopwatches"] {
                #expect(items.count == 50)
            } else {
                Issue.record("reply \(index) is neither: \(reply)")
            }
        }
        #expect(try client.get("s1").state == .counting)
    }

    @Test("the unfinished-message deadline starts again with each message, so a busy client is never cut off")
    func deadlinePerMessage() throws {
        let directory = try TestDirectory()
        // A second's deadline over three seconds of messages: a stall of the test under a
        // sanitizer (beside the other suites) does not reach it.
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--message-timeout", "1s"])
        let connection = try RawConnection(daemon.socket)
        let call = Array(#"{"method":"io.stopwatchd.Get"}"#.utf8) + [0]
        // Every write ends one message and begins the next: always a partial one pending.
        try connection.send(Array(call[..<10]))
        let start = ContinuousClock.now
        var answered = 0
        while ContinuousClock.now - start < .seconds(3) {
            try connection.send(Array(call[10...]) + Array(call[..<10]))
            #expect(try connection.reply()?.stopwatch?.name == "default")
            answered += 1
            Deadline.wait(.milliseconds(100)) { false }
        }
        #expect(answered >= 10)
        #expect(!connection.isClosedByPeer)
    }

    @Test("a connection streams one Watch: a further call on it is a protocol error")
    func oneWatchPerConnection() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let connection = try RawConnection(daemon.socket)
        try connection.call("io.stopwatchd.Watch", more: true)
        #expect(try connection.reply()?.stopwatch?.name == "default")
        try connection.call("io.stopwatchd.Get")
        #expect(try connection.reply(where: { $0.errorName != nil })?.errorName == "io.stopwatchd.ProtocolError")
        #expect(try connection.closesByPeer())
    }

    @Test("watching names that do not exist does not use up the stopwatch limit")
    func watchersDoNotCountTowardTheLimit() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--max-stopwatches", "1"])
        let watchers = try (0..<3).map { index in
            let watcher = try RawConnection(daemon.socket)
            try watcher.call("io.stopwatchd.Watch", #"{"name":"ghost\#(index)"}"#, more: true)
            _ = try watcher.reply()
            return watcher
        }
        #expect(watchers.count == 3)
        let client = StopwatchClient(socketPath: daemon.socket)
        #expect(try client.start("real").state == .counting)
        #expect(throws: ClientError.self) { try client.start("second") }
    }

    @Test("swctl at a daemon's connection limit: exit 69, try again later")
    func connectionLimitForSwctl() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--max-connections", "1"])
        var holder: RawConnection?
        // The readiness probe's connection may linger a moment: hold the only slot once it is free.
        #expect(Deadline.wait {
            guard let connection = try? RawConnection(daemon.socket) else { return false }
            try? connection.call("io.stopwatchd.Get")
            guard (try? connection.reply(timeout: .seconds(2)))??.errorName == nil else { return false }
            holder = connection
            return true
        })
        let refused = try Swctl.run(["status"], socket: daemon.socket)
        #expect(refused.status == 69)
        #expect(refused.error.contains("connection limit"))
        holder = nil
        #expect(holder == nil)
    }

    @Test("two daemons started at the same moment on one path: exactly one runs")
    func racingStarts() throws {
        let directory = try TestDirectory()
        let daemons = try (0..<4).map { _ in try DaemonProcess(socket: directory.socket, waitUntilReady: false) }
        #expect(Deadline.wait { (try? StopwatchClient(socketPath: directory.socket).list()) != nil })
        // The losers exit on their own; the winner keeps running.
        #expect(Deadline.wait { daemons.count(where: { $0.isRunning }) == 1 })
        let running = daemons.filter { $0.isRunning }
        #expect(running.count == 1)
        let winner = try #require(running.first)
        #expect(try StopwatchClient(socketPath: directory.socket).start().state == .counting)
        #expect(winner.stop() == 0)
    }
}
