import Foundation
import LinuxSystem
import StopwatchdClient
import Synchronization
import Testing

/// Clients that come and go as fast as they can. Run on its own (see `.ci/run`): its busy
/// threads would upset the timing of tests beside it.
@Suite("connection churn")
struct ChurnTests {
    // The daemon's sockets were libdispatch sources once: this churn crashed libdispatch's
    // manager thread (a freed epoll registration used) in one run of three.
    @Test("clients connecting and leaving by the thousand beside callers and watchers: every call answered, the daemon keeps running")
    func connectionChurn() throws {
        _ = ResourceLimits.raiseOpenFileLimit()
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "10ms"])
        let client = StopwatchClient(socketPath: daemon.socket)
        for name in 0..<6 { _ = try client.start("n\(name)") }
        // Not touched by the churn: it ticks throughout.
        _ = try client.start("ticking")
        let path = daemon.socket
        let end = ContinuousClock.now + .seconds(30)
        let unanswered = Atomic<Int>(0)
        let firstUnanswered = Locked<String>("")
        @Sendable func noReply(_ what: String, _ connection: RawConnection) {
            unanswered.add(1, ordering: .relaxed)
            let how = connection.isClosedByPeer ? "closed by the daemon" : "no reply in 30 s"
            firstUnanswered.withLock { if $0.isEmpty { $0 = "\(what): \(how)" } }
        }
        let churners: [@Sendable (Int) -> Void] = [
            // Connect, and hang up at once.
            { _ in
                guard let socket = try? FileDescriptor.unixStreamSocket(nonBlocking: false) else { return }
                try? socket.connect(toPath: path)
                socket.close()
            },
            // Up to twenty calls sent together; every other time, gone before the replies.
            { round in
                guard let connection = try? RawConnection(path) else { return }
                let methods = ["Start", "Lap", "Stop", "Get", "Reset"]
                for call in 0...(round * 7 % 20) {
                    let name = "n\((round + call) % 6)"
                    try? connection.call("io.stopwatchd.\(methods[(round + call) % methods.count])", #"{"name":"\#(name)"}"#)
                }
                if round.isMultiple(of: 2), (try? connection.reply(timeout: .seconds(30))) == nil {
                    noReply("\(round * 7 % 20 + 1) calls at once", connection)
                }
            },
            // Watch 10 ms ticks for up to half a second, reading them or not, then go.
            { round in
                guard let connection = try? RawConnection(path) else { return }
                try? connection.call("io.stopwatchd.Watch", #"{"name":"n\#(round % 6)"}"#, more: true)
                let leave = ContinuousClock.now + .milliseconds(round * 37 % 500)
                while ContinuousClock.now < leave {
                    if round.isMultiple(of: 3) { _ = try? connection.reply(timeout: .milliseconds(1)) }
                    usleep(1_000)
                }
            },
            // 4,000 calls at once: their replies (92 bytes each, 368 KB) are more than the
            // socket buffer takes (about 230 KB), so the daemon's writes stall until this
            // reads a few, and then it is gone. The daemon still reads every call: it stops
            // reading only past 256 KiB of unsent replies.
            { round in
                guard let connection = try? RawConnection(path) else { return }
                let calls = String(repeating: #"{"method":"io.stopwatchd.Get","parameters":{"name":"quiet"}}"# + "\0", count: 4000)
                try? connection.send(Array(calls.utf8))
                for _ in 0..<(1 + round % 50) {
                    guard let reply = try? connection.reply(timeout: .seconds(30)) else {
                        noReply("4,000 calls at once", connection)
                        break
                    }
                    // Refused at the connection limit: that was the only reply.
                    if reply.errorName != nil { break }
                }
            },
        ]
        let threads = [0, 0, 1, 1, 1, 2, 2, 2, 3].map { churners[$0] }
        let group = DispatchGroup()
        for churn in threads {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var round = 0
                while ContinuousClock.now < end {
                    churn(round)
                    round += 1
                }
            }
        }
        #expect(group.wait(timeout: .now() + 300) == .success)
        #expect(daemon.isRunning, "the daemon died: \(daemon.readLog().suffix(2000))")
        #expect(unanswered.load(ordering: .relaxed) == 0, "calls never answered: \(unanswered.load(ordering: .relaxed)); the first: \(firstUnanswered.withLock { $0 }); the daemon's log ends: \(daemon.readLog().suffix(1500))")
        // At the connection limit now and then: warned of once an episode, not per client.
        let limitWarnings = daemon.readLog().components(separatedBy: "connection limit of").count - 1
        #expect(limitWarnings <= 100, "\(limitWarnings) warnings of the connection limit")
        // Still serving: a new watcher gets its ticks (once the connections the churn left
        // are gone, and it is not refused at the limit).
        var replies = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while replies == 0, ContinuousClock.now < deadline {
            let watcher = try RawConnection(path)
            try watcher.call("io.stopwatchd.Watch", #"{"name":"ticking"}"#, more: true)
            while replies < 5, try watcher.reply(timeout: .seconds(30))?.stopwatch != nil { replies += 1 }
        }
        #expect(replies == 5)
    }
}
