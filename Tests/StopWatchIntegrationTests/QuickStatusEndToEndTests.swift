import Foundation
import LinuxSystem
import StopwatchProtocol
import Testing

/// `swctl status` through its quick path and through the full client against one daemon:
/// the same output, errors and exit status, for every kind of stopwatch. The full client is
/// made to answer by `STOPWATCHD_TICK=1s`, which the quick path leaves to it and which shows
/// no tenths. And a server that answers one connection only, which only the quick path can
/// have been answered by.
@Suite("swctl status: quick path and full client alike")
struct QuickStatusEndToEndTests {
    let directory: TestDirectory
    let daemon: DaemonProcess

    init() throws {
        directory = try TestDirectory()
        daemon = try DaemonProcess(socket: directory.socket)
    }

    func quick(_ arguments: [String], _ environment: [String: String]) throws -> Swctl {
        try Swctl.run(arguments, socket: daemon.socket, environment: environment)
    }

    func full(_ arguments: [String], _ environment: [String: String]) throws -> Swctl {
        try Swctl.run(arguments, socket: daemon.socket, environment: environment.merging(["STOPWATCHD_TICK": "1s"]) { old, _ in old })
    }

    func swctl(_ arguments: String...) throws {
        let result = try Swctl.run(arguments, socket: daemon.socket)
        #expect(result.status == 0, "\(arguments): \(result.error)")
    }

    /// The two alike, asked back to back. A counting stopwatch may pass a second between
    /// them: up to five pairs, and one alike is enough.
    func expectAlike(_ arguments: [String], _ environment: [String: String] = [:]) throws {
        var pairs: [String] = []
        for _ in 0..<5 {
            let quick = try quick(arguments, environment), full = try full(arguments, environment)
            if quick.output == full.output, quick.error == full.error, quick.status == full.status {
                #expect(!quick.output.isEmpty || !quick.error.isEmpty)
                return
            }
            pairs.append("quick \(quick.status) '\(quick.output)' '\(quick.error)' / full \(full.status) '\(full.output)' '\(full.error)'")
        }
        Issue.record("\(arguments) \(environment): never alike: \(pairs)")
    }

    @Test("every kind of stopwatch, and the cases the quick path leaves to the full client")
    func everyKindAlike() throws {
        try swctl("start", "work")
        try swctl("start", "paused")
        try swctl("stop", "paused")
        try swctl("start", "lapped")
        try swctl("lap", "lapped")
        try swctl("timer", "tea", "5m")
        try swctl("start", "noted", "--note", "chapter 3")
        try swctl("start", "awake")
        try swctl("skip-sleep", "awake")
        try swctl("pomodoro", "pomo")
        try swctl("start", "café")
        try swctl("start", "a b")
        for name in ["work", "paused", "lapped", "tea", "noted", "awake", "pomo", "café", "a b", "never-made"] {
            try expectAlike(["status", name])
        }
        try expectAlike(["status"])
        try expectAlike(["status", "paused"], ["STOPWATCHD_TICK": "100ms"])
        try expectAlike(["--json", "status", "paused"])
        try expectAlike(["status", "bad/name"])
    }

    @Test("the quick path answers alone: a server that takes one connection, then none")
    func answeredByTheQuickPath() throws {
        let path = directory.file("once.sock")
        let reply = Stopwatch(name: "tea", state: .pause, elapsedMs: 3_723_999, lapsMs: []).getReplyMessage
        let server = try OneReplyServer(path: path, reply: reply)
        let result = try Swctl.run(["status", "tea"], socket: path)
        #expect(result.output == "tea paused 1:02:03\n" && result.status == 0, "\(result.status) '\(result.output)' '\(result.error)'")
        #expect(server.request() == Array(#"{"method":"io.stopwatchd.Get","parameters":{"name":"tea"}}"#.utf8))
    }
}

/// A Unix socket server that answers the first connection's first message with `reply`,
/// then closes and removes its socket: a second connection (the full client's) finds none.
final class OneReplyServer: @unchecked Sendable {
    // Unchecked: `received` is written by the server's thread before `done` is signalled and
    // read only after waiting for it.
    private var received: [UInt8] = []
    private let done = DispatchSemaphore(value: 0)

    init(path: String, reply: [UInt8]) throws {
        let socket = try FileDescriptor.unixStreamSocket(nonBlocking: false)
        do {
            try socket.bind(toPath: path)
            try socket.listen(backlog: 4)
        } catch {
            socket.close()
            throw error
        }
        let listener = socket.rawValue
        Thread.detachNewThread { [self] in
            let connection = accept(listener, nil, nil)
            // None after this one.
            unlink(path)
            close(listener)
            var buffer = [UInt8](repeating: 0, count: 4096)
            var bytes: [UInt8] = []
            while !bytes.contains(0) {
                let count = read(connection, &buffer, buffer.count)
                guard count > 0 else { break }
                bytes += buffer[0..<count]
            }
            _ = reply.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
            close(connection)
            received = bytes.firstIndex(of: 0).map { Array(bytes[..<$0]) } ?? bytes
            done.signal()
        }
    }

    /// The message received, without its NUL, once answered (empty after 10 s without one).
    func request() -> [UInt8] {
        guard done.wait(timeout: .now() + 10) == .success else { return [] }
        return received
    }
}
