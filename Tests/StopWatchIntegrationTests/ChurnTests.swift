import Foundation
import StopWatchCore
import Testing

/// Clients that come and go as fast as they can. Run on its own (see `.ci/run`): its nine
/// busy threads would upset the timing of tests beside it.
@Suite("connection churn")
struct ChurnTests {
    // The daemon's sockets were dispatch sources once: this churn crashed libdispatch's
    // manager thread (a freed epoll registration used) in most runs of under a minute.
    @Test("clients connecting and leaving by the thousand beside callers and watchers: the daemon keeps running")
    func connectionChurn() throws {
        _ = ResourceLimits.raiseOpenFileLimit()
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "10ms"])
        let client = StopWatchClient(socketPath: daemon.socket)
        for name in 0..<6 { _ = try client.start("n\(name)") }
        let path = daemon.socket
        let end = ContinuousClock.now + .seconds(30)
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
                for call in 0...(round * 7 % 20) {
                    let method = ["Start", "Stop", "Lap", "Get"][(round + call) % 4]
                    try? connection.call("io.stopwatchd.\(method)", #"{"name":"n\#((round + call) % 6)"}"#)
                }
                if round.isMultiple(of: 2) { _ = try? connection.reply(timeout: .seconds(5)) }
            },
            // Watch 10 ms ticks through a small buffer for up to half a second, reading some.
            { round in
                guard let connection = try? RawConnection(path, receiveBuffer: 1024) else { return }
                try? connection.call("io.stopwatchd.Watch", #"{"name":"n\#(round % 6)"}"#, more: true)
                let leave = ContinuousClock.now + .milliseconds(round * 37 % 500)
                while ContinuousClock.now < leave {
                    if round.isMultiple(of: 3) { _ = try? connection.reply(timeout: .milliseconds(1)) }
                    usleep(1_000)
                }
            },
        ]
        let group = DispatchGroup()
        for churn in [churners[0], churners[0], churners[1], churners[1], churners[1], churners[2], churners[2], churners[2], churners[2]] {
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
        #expect(group.wait(timeout: .now() + 120) == .success)
        #expect(daemon.isRunning, "the daemon died: \(daemon.readLog().suffix(2000))")
        #expect((try? client.get("n0")) != nil)
    }
}
