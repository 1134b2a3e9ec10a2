import Foundation
import LinuxSystem
import StopwatchdClient
import Testing

/// sd_notify as systemd would see it: a datagram socket standing in for `$NOTIFY_SOCKET`.
@Suite("sd_notify")
struct SystemdNotifyTests {
    /// Receives what the daemon tells "systemd".
    final class NotifySocket {
        let socket: FileDescriptor
        let path: String

        init(path: String) throws {
            self.path = path
            socket = try FileDescriptor.unixDatagramSocket()
            try socket.bind(toPath: path)
        }

        deinit { socket.close() }

        /// Waits for the STATUS line to count `count` watchers: each has been told its first
        /// state by then (the status follows a change by up to 200 ms, on the same queue).
        func watched(_ count: Int, timeout: Duration = .seconds(20)) -> Bool {
            let end = ContinuousClock.now + timeout
            while ContinuousClock.now < end, let message = message(containing: "STATUS=", timeout: end - ContinuousClock.now) {
                if message.split(separator: "\n").contains(where: { $0.hasPrefix("STATUS=") && $0.hasSuffix(", \(count) watched") }) {
                    return true
                }
            }
            return false
        }

        /// Messages until one holds `field`; nil after `timeout`.
        func message(containing field: String, timeout: Duration = .seconds(20)) -> String? {
            let end = ContinuousClock.now + timeout
            while ContinuousClock.now < end, (try? socket.poll(timeout: end - ContinuousClock.now)) == true {
                guard let bytes = try? socket.read(upTo: 4096) else { continue }
                let message = String(decoding: bytes, as: UTF8.self)
                if message.split(separator: "\n").contains(where: { $0.hasPrefix(field) }) { return message }
            }
            return nil
        }
    }

    @Test("READY=1 once listening and restored, STATUS with counts as they change, WATCHDOG=1, STOPPING=1")
    func lifecycle() throws {
        let directory = try TestDirectory()
        let notify = try NotifySocket(path: directory.file("notify"))
        let daemon = try DaemonProcess(
            socket: directory.socket,
            environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"]
        )
        let ready = try #require(notify.message(containing: "READY=1"))
        #expect(ready.contains("STATUS=0 stopwatches, 0 counting, 0 watched"))
        _ = try StopwatchClient(socketPath: daemon.socket).start("tea")
        #expect(notify.message(containing: "STATUS=1 stopwatch, 1 counting") != nil)
        #expect(notify.message(containing: "WATCHDOG=1") != nil)
        #expect(daemon.stop() == 0)
        #expect(notify.message(containing: "STOPPING=1") != nil)
    }

    @Test("an abstract @ socket works too, and a state directory that cannot be written shows in STATUS")
    func abstractSocketAndSaveProblem() throws {
        let directory = try TestDirectory()
        let name = "@stopwatchd-test-\(UInt32.random(in: 0...UInt32.max))"
        let notify = try NotifySocket(path: name)
        let state = DaemonProcess.stateDirectory(for: directory.socket)
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: state + "/stopwatches", contents: nil))
        let daemon = try DaemonProcess(socket: directory.socket, environment: ["NOTIFY_SOCKET": name])
        #expect(notify.message(containing: "READY=1") != nil)
        _ = try StopwatchClient(socketPath: daemon.socket).start()
        #expect(notify.message(containing: "STATUS=1 stopwatch, 1 counting, 0 watched; NOT SAVING") != nil)
        // One last try at exit, and what is lost is named.
        #expect(daemon.stop() == 0)
        #expect(daemon.readLog().contains("stopping with unsaved changes to default in \(state)/stopwatches"))
    }

    @Test("a watcher that leaves at once, or breaks the protocol as it begins, is not counted once gone")
    func watchersLeavingAtOnce() throws {
        let directory = try TestDirectory()
        let notify = try NotifySocket(path: directory.file("notify"))
        let daemon = try DaemonProcess(socket: directory.socket, environment: ["NOTIFY_SOCKET": notify.path])
        #expect(notify.message(containing: "READY=1") != nil)
        // Nobody else watching, the state comes a moment after the Watch: the Get behind it
        // waits for it, then gets its error.
        let alone = try RawConnection(daemon.socket)
        try alone.send(Array(#"{"method":"io.stopwatchd.Watch","parameters":{"name":"solo"},"more":true}"#.utf8) + [0]
            + Array(#"{"method":"io.stopwatchd.Get","parameters":{}}"#.utf8) + [0])
        #expect(try alone.reply()?["continues"] == .bool(true))
        #expect(try alone.reply()?["error"] == .string("io.stopwatchd.ProtocolError"))
        // Another watcher first: then a new one gets the current state at once, while its
        // stream is still starting.
        let first = try RawConnection(daemon.socket)
        try first.call("io.stopwatchd.Watch", #"{"name":"tea"}"#, more: true)
        #expect(try first.reply() != nil)
        for _ in 0..<10 {
            // A call after a Watch on the same connection is a protocol error: the state,
            // then the error, then the end.
            let breaking = try RawConnection(daemon.socket)
            try breaking.send(Array(#"{"method":"io.stopwatchd.Watch","parameters":{"name":"tea"},"more":true}"#.utf8) + [0]
                + Array(#"{"method":"io.stopwatchd.Get","parameters":{}}"#.utf8) + [0])
            let state = try #require(try breaking.reply())
            #expect(state["continues"] == .bool(true))
            #expect(try breaking.reply()?["error"] == .string("io.stopwatchd.ProtocolError"))
            // Gone before the daemon wrote anything: its first write fails.
            let leaving = try RawConnection(daemon.socket)
            try leaving.call("io.stopwatchd.Watch", #"{"name":"tea"}"#, more: true)
        }
        first.socket.shutdown()
        _ = try StopwatchClient(socketPath: daemon.socket).start("other")
        #expect(notify.message(containing: "STATUS=1 stopwatch, 1 counting, 0 watched") != nil)
    }
}
