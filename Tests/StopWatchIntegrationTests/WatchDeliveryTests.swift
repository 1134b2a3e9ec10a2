import Foundation
import StopwatchProtocol
import Testing
import Varlink

/// A watcher that reads slowly still sees every change, in order; only ticks merge, and one
/// too far behind is told `WatchTooSlow` and let go (SPEC §3).
@Suite("watch delivery")
struct WatchDeliveryTests {
    /// `count` toggles of `name`, pipelined 500 at a time, their replies read: the stopwatch
    /// changes `count` times in a few milliseconds. (All in one write, a caller that reads
    /// nothing until it has sent them all could fill both socket buffers and wait on the
    /// daemon, which waits on it.)
    static func toggle(_ name: String, times count: Int, socket: String) throws {
        let caller = try RawConnection(socket)
        let call = #"{"method":"io.stopwatchd.Toggle","parameters":{"name":"\#(name)"}}"#
        for batch in stride(from: 0, to: count, by: 500) {
            let size = min(500, count - batch)
            try caller.send(Array(Array(repeating: call, count: size).joined(separator: "\0").utf8) + [0])
            for index in batch..<(batch + size) {
                let reply = try caller.reply()
                #expect(reply?.stopwatch?.name == name, "toggle \(index): \(String(describing: reply))")
                if reply == nil { return }
            }
        }
    }

    /// Under a sanitizer, beside the load tests, the daemon's queue can stall for long
    /// stretches: its deadlines must not end these connections.
    static var sanitizerTimeouts: [String] {
        Binaries.sanitized ? ["--message-timeout", "10m", "--write-timeout", "10m", "--idle-timeout", "10m"] : []
    }

    /// State on tmpfs: these tests are about delivery, not the disk's fsync. (And a tick of an
    /// hour: no tick comes between the changes, however slowly a sanitizer runs them.)
    static func stateDirectory() -> String { "/dev/shm/swwatch-\(UInt32.random(in: 0...UInt32.max))" }

    @Test("a watcher that reads nothing until 3,000 changes are made then gets all of them, in order")
    func slowWatcherMissesNothing() throws {
        let directory = try TestDirectory()
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--state-dir", state, "--max-pending-events", "100000", "--tick", "1h"] + Self.sanitizerTimeouts)
        let watcher = try RawConnection(daemon.socket)
        try watcher.call("io.stopwatchd.Watch", #"{"name":"t"}"#, more: true)
        #expect(try watcher.reply()?.stopwatch?.state == .stopped)

        // Far more than its socket holds: the rest must wait in the daemon, none merged.
        try Self.toggle("t", times: 3000, socket: daemon.socket)
        var states: [Stopwatch.State] = []
        while states.count < 3000, let reply = try watcher.reply(timeout: .seconds(30)), let stopwatch = reply.stopwatch {
            states.append(stopwatch.state)
        }
        #expect(states.count == 3000)
        let alternating = states.indices.allSatisfy { states[$0] == ($0.isMultiple(of: 2) ? .counting : .pause) }
        #expect(alternating, "changes merged or reordered")
    }

    @Test("more changes waiting than --max-pending-events: WatchTooSlow as its last word, then close; others unaffected")
    func tooSlow() throws {
        let directory = try TestDirectory()
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--state-dir", state, "--max-pending-events", "10", "--tick", "1h"] + Self.sanitizerTimeouts)
        let stuck = try RawConnection(daemon.socket)
        try stuck.call("io.stopwatchd.Watch", #"{"name":"t"}"#, more: true)
        try Self.toggle("t", times: 5000, socket: daemon.socket)
        #expect(daemon.waitForLog(containing: "fell more than 10 changes behind"))

        // Reading now: the changes that fitted, in order, then the error, then the end.
        var states: [Stopwatch.State] = []
        var last: JSONObject?
        while let reply = try stuck.reply(timeout: .seconds(30)) {
            last = reply
            if let stopwatch = reply.stopwatch { states.append(stopwatch.state) }
        }
        #expect(last?.errorName == "io.stopwatchd.WatchTooSlow")
        #expect(last?.parameters["pending"] == .int(10))
        #expect(stuck.isClosedByPeer)
        let changes = Array(states.dropFirst())
        #expect(changes.indices.allSatisfy { changes[$0] == ($0.isMultiple(of: 2) ? .counting : .pause) }, "changes merged or reordered")

        // The daemon serves on, and a new watcher is welcome.
        let fresh = try RawConnection(daemon.socket)
        try fresh.call("io.stopwatchd.Watch", #"{"name":"t"}"#, more: true)
        #expect(try fresh.reply()?.stopwatch?.name == "t")
    }
}
