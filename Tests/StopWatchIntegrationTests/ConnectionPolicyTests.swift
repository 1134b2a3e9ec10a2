import Foundation
import StopwatchdClient
import Testing

/// What one client, or one user, may hold of the daemon (SPEC §4 limits).
@Suite("connection policies")
struct ConnectionPolicyTests {
    @Test("a connection that neither calls nor watches is closed after --idle-timeout; a watch is kept")
    func idleTimeout() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--idle-timeout", "500ms"])
        let silent = try RawConnection(daemon.socket)
        let caller = try RawConnection(daemon.socket)
        try caller.call("io.stopwatchd.Get")
        #expect(try caller.reply()?.stopwatch?.name == "default")
        let watcher = try RawConnection(daemon.socket)
        try watcher.call("io.stopwatchd.Watch", more: true)
        #expect(try watcher.reply()?.stopwatch?.name == "default")

        #expect(try silent.closesByPeer(timeout: .seconds(20)))
        #expect(try caller.closesByPeer(timeout: .seconds(20)))
        // One made after the watch has been idle-closed too: the watch's own time is up.
        let later = try RawConnection(daemon.socket)
        #expect(try later.closesByPeer(timeout: .seconds(20)))
        // Well past the timeout, the watch still streams.
        _ = try StopwatchClient(socketPath: daemon.socket).start()
        #expect(try watcher.reply()?.stopwatch?.state == .counting)
        #expect(!watcher.isClosedByPeer)
    }

    @Test("while the daemon does not read a client's calls, their unfinished message is not held against it")
    func noMessageDeadlineWhileNotReading() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--message-timeout", "300ms"])
        let client = StopwatchClient(socketPath: daemon.socket)
        for index in 0..<50 { _ = try client.start("s\(index)") }
        // 4,000 Lists (a 3 KiB reply each) in one write, then nothing read for a while: the
        // daemon stops reading once its unsent replies pass the high-water mark. A call is
        // 48 bytes, which 64 KiB reads split, so the daemon holds part of one message then.
        let connection = try RawConnection(daemon.socket)
        let calls = Array(repeating: #"{"method":"io.stopwatchd.List","parameters":{}}"#, count: 4000)
        try connection.send(Array(calls.joined(separator: "\0").utf8) + [0])
        Deadline.wait(.seconds(1)) { false }
        for index in 0..<4000 {
            let reply = try #require(try connection.reply(), "reply \(index)")
            #expect(reply.errorName == nil, "reply \(index): \(reply)")
            if reply.errorName != nil { return }
        }
    }

    static var canSwitchUser: Bool { geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") }

    /// Opens `count` connections to `socket` as uid/gid 65534 and makes a Get on each, all
    /// held open together; the reply (or error) of each, one per line.
    static func connectAsNobody(_ count: Int, socket: String) throws -> [String] {
        let script = """
            import socket, sys, json
            held = []
            for i in range(\(count)):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(10)
                s.connect(sys.argv[1])
                held.append(s)
                # A refused connection may be closed before the call is sent: its
                # refusal is read all the same.
                try:
                    s.sendall(b'{"method":"io.stopwatchd.Get"}\\0')
                except OSError:
                    pass
                data = b''
                while not data.endswith(b'\\0'):
                    try:
                        chunk = s.recv(65536)
                    except ConnectionResetError:
                        chunk = b''
                    if not chunk: break
                    data += chunk
                if not data:
                    print('closed without a reply')
                    continue
                reply = json.loads(data.rstrip(b'\\0'))
                print(reply.get('error', 'ok'))
            """
        let result = try ChildProcess.run(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, socket],
            environment: Binaries.childEnvironment
        )
        #expect(result.status == 0, "\(result.error)")
        return result.output.split(separator: "\n").map(String.init)
    }

    @Test("a user other than root and the daemon's holds at most its share of the connections",
          .enabled(if: canSwitchUser, "needs root and setpriv to connect as another user"))
    func perUserShare() throws {
        let directory = try TestDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--allow-group", "nogroup", "--max-connections-per-user", "2"])
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: daemon.socket)
        let replies = try Self.connectAsNobody(3, socket: daemon.socket)
        #expect(replies == ["ok", "ok", "io.stopwatchd.ProtocolError"])
        #expect(daemon.waitForLog(containing: "holds its share of 2 connections"))
        // The daemon's own user is not held to it.
        let own = try (0..<5).map { _ in try RawConnection(daemon.socket) }
        for connection in own {
            try connection.call("io.stopwatchd.Get")
            #expect(try connection.reply()?.errorName == nil)
        }
    }
}
