import Foundation
import LinuxSystem
import Testing

/// What swctl says when the daemon ends a connection mid-answer: a fake daemon in the test
/// accepts one connection, reads the call, answers with `reply` and closes.
@Suite("swctl: a connection the daemon ends")
struct ConnectionEndedTests {
    /// Serves one connection on `path` with `reply`, on a thread of its own.
    static func serveOnce(at path: String, reply: String) throws -> DispatchSemaphore {
        let listener = try FileDescriptor.unixStreamSocket(nonBlocking: false)
        try listener.bind(toPath: path)
        try listener.listen(backlog: 4)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer {
                listener.close()
                done.signal()
            }
            guard let connection = try? listener.accept() else { return }
            defer { connection.close() }
            try? connection.setNonBlocking(false)
            // The call, up to its NUL.
            var received: [UInt8] = []
            while !received.contains(0), let bytes = try? connection.read(upTo: 4096), !bytes.isEmpty { received += bytes }
            var sent = 0
            let bytes = Array(reply.utf8)
            while sent < bytes.count, let count = try? connection.send(bytes, from: sent) { sent += count }
        }
        return done
    }

    @Test("closed mid-stream without a word: swctl says the connection ended before the answer was complete, exit 69")
    func closedMidStream() throws {
        let directory = try TestDirectory()
        let part = #"{"parameters":{"intervals":[{"name":"a","start_ms":1767261600000,"end_ms":1767261601000,"elapsed_ms":1000}]},"continues":true}"# + "\0"
        let served = try Self.serveOnce(at: directory.socket, reply: part)
        let result = try Swctl.run(["log", "--csv"], socket: directory.socket)
        _ = served.wait(timeout: .now() + 10)
        #expect(result.status == 69)
        #expect(result.error.hasPrefix("swctl: the connection to stopwatchd at \(directory.socket) ended before the answer was complete (the daemon closed the connection)"), "\(result.error)")
        #expect(!result.error.contains("no stopwatchd"))
        #expect(result.error.split(separator: "\n").count == 1)
    }

    @Test("ended with a ProtocolError: swctl says why, exit 70")
    func endedWithProtocolError() throws {
        let directory = try TestDirectory()
        let error = #"{"error":"io.stopwatchd.ProtocolError","parameters":{"reason":"message left unfinished for 30s"}}"# + "\0"
        let served = try Self.serveOnce(at: directory.socket, reply: error)
        let result = try Swctl.run(["log"], socket: directory.socket)
        _ = served.wait(timeout: .now() + 10)
        #expect(result.status == 70)
        #expect(result.error == "swctl: stopwatchd could not answer and closed the connection: message left unfinished for 30s\n", "\(result.error)")
    }
}
