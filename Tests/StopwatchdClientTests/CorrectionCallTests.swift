import Foundation
import StopwatchProtocol
@testable import StopwatchdClient
import Testing
import Varlink

/// The calls that correct the record and the new parameters of Start, Stop and Toggle: what
/// the client sends (each parameter given, none absent ones), and how it reads the replies
/// and refusals, against a socket that answers one call with a canned reply.
@Suite("correction calls")
struct CorrectionCallTests {
    /// A socket that takes one connection, reads one call up to its NUL, answers `reply` and
    /// closes. `call` is the call it read, parsed.
    final class OneCallDaemon: @unchecked Sendable {
        // @unchecked: `received` is written by the accepting thread before it signals
        // `done`, and read only after `done` is waited on.
        let path: String
        private let listener: CInt
        private var received: [UInt8] = []
        private let done = DispatchSemaphore(value: 0)

        init(reply: String) throws {
            let path = "/tmp/swcorr-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).sock"
            let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0, listen(listener, 1) == 0 else { throw CocoaError(.fileWriteUnknown) }
            self.path = path
            self.listener = listener
            Thread.detachNewThread { [self] in
                let connection = accept(listener, nil, nil)
                var buffer = [UInt8](repeating: 0, count: 65_536)
                var bytes: [UInt8] = []
                while !bytes.contains(0) {
                    let count = read(connection, &buffer, buffer.count)
                    guard count > 0 else { break }
                    bytes += buffer[0..<count]
                }
                received = Array(bytes.prefix { $0 != 0 })
                let answer = Array(reply.utf8) + [0]
                _ = answer.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                close(connection)
                done.signal()
            }
        }

        /// The call read: its method and parameters (by key: the client's order is its own).
        func call() throws -> (method: String, parameters: [String: JSONValue]) {
            done.wait()
            close(listener)
            unlink(path)
            guard case .object(let object) = try JSONParser.parse(received),
                case .string(let method)? = object["method"]
            else { throw CocoaError(.fileReadCorruptFile) }
            guard case .object(let parameters)? = object["parameters"] else { return (method, [:]) }
            return (method, Dictionary(uniqueKeysWithValues: parameters.members.map { ($0.key, $0.value) }))
        }

        var client: StopwatchClient { StopwatchClient(socketPath: path, timeout: .seconds(30)) }
    }

    static let stopwatchReply = #"{"parameters":{"stopwatch":{"name":"work","state":"counting","elapsed_ms":600000,"laps_ms":[],"note":"the parser"}}}"#
    static let intervalJSON = #"{"id":"0123456789abcdef","name":"work","start_ms":1000,"end_ms":61000,"elapsed_ms":60000,"note":"why","device":"desk"}"#
    static let interval = Interval(id: "0123456789abcdef", name: "work", startMs: 1_000, endMs: 61_000, elapsedMs: 60_000, note: "why", device: "desk")

    @Test("start with at_ms and note; the reply's note is read")
    func startInThePast() throws {
        let daemon = try OneCallDaemon(reply: Self.stopwatchReply)
        let stopwatch = try daemon.client.start("work", at: 1_795_683_000_000, note: "the parser")
        let call = try daemon.call()
        #expect(call.method == "io.stopwatchd.Start")
        #expect(call.parameters == ["name": .string("work"), "at_ms": .int(1_795_683_000_000), "note": .string("the parser")])
        #expect(stopwatch.note == "the parser")
    }

    @Test("stop and toggle without at_ms or note send neither")
    func nothingAbsentSent() throws {
        let stop = try OneCallDaemon(reply: Self.stopwatchReply)
        _ = try stop.client.stop("work")
        #expect(try stop.call().parameters == ["name": .string("work")])
        let toggle = try OneCallDaemon(reply: Self.stopwatchReply)
        _ = try toggle.client.toggle(nil, at: 5)
        #expect(try toggle.call().parameters == ["at_ms": .int(5)])
    }

    @Test("setCountsSleep")
    func countsSleep() throws {
        let daemon = try OneCallDaemon(reply: #"{"parameters":{"stopwatch":{"name":"work","state":"stopped","elapsed_ms":0,"laps_ms":[],"counts_sleep":false}}}"#)
        let stopwatch = try daemon.client.setCountsSleep("work", false)
        let call = try daemon.call()
        #expect(call.method == "io.stopwatchd.SetCountsSleep")
        #expect(call.parameters == ["name": .string("work"), "counts_sleep": .bool(false)])
        #expect(!stopwatch.countsSleep)
    }

    @Test("track sends name, start, end and note; the interval comes back whole")
    func track() throws {
        let daemon = try OneCallDaemon(reply: #"{"parameters":{"interval":"# + Self.intervalJSON + "}}")
        let interval = try daemon.client.track("work", start: 1_000, end: 61_000, note: "why")
        let call = try daemon.call()
        #expect(call.method == "io.stopwatchd.Track")
        #expect(call.parameters == ["name": .string("work"), "start_ms": .int(1_000), "end_ms": .int(61_000), "note": .string("why")])
        #expect(interval == Self.interval)
    }

    @Test("amend sends the id and what changes only")
    func amend() throws {
        let daemon = try OneCallDaemon(reply: #"{"parameters":{"interval":"# + Self.intervalJSON + "}}")
        #expect(try daemon.client.amend("012345", end: 61_000) == Self.interval)
        let call = try daemon.call()
        #expect(call.method == "io.stopwatchd.Amend")
        #expect(call.parameters == ["id": .string("012345"), "end_ms": .int(61_000)])
    }

    @Test("delete")
    func delete() throws {
        let daemon = try OneCallDaemon(reply: #"{"parameters":{"interval":"# + Self.intervalJSON + "}}")
        #expect(try daemon.client.delete("0123456789abcdef") == Self.interval)
        #expect(try daemon.call() == ("io.stopwatchd.Delete", ["id": .string("0123456789abcdef")]))
    }

    @Test("undo: the interval and what was undone")
    func undo() throws {
        let daemon = try OneCallDaemon(reply: #"{"parameters":{"interval":"# + Self.intervalJSON + #","undone":"delete"}}"#)
        let (interval, undone) = try daemon.client.undo()
        #expect(try daemon.call().method == "io.stopwatchd.Undo")
        #expect(interval == Self.interval)
        #expect(undone == .delete)
    }

    @Test("a reply without an interval, or with an unknown undone, is a protocol violation (exit 70)", arguments: [
        #"{"parameters":{}}"#, #"{"parameters":{"interval":{"name":"x"},"undone":"track"}}"#,
        #"{"parameters":{"interval":"# + intervalJSON + #","undone":"redo"}}"#,
    ])
    func malformedUndo(reply: String) throws {
        let daemon = try OneCallDaemon(reply: reply)
        do {
            _ = try daemon.client.undo()
            Issue.record("a malformed reply was taken")
        } catch {
            #expect(error.exitStatus == 70)
        }
        _ = try daemon.call()
    }

    @Test("refusals: NoSuchInterval, InvalidInterval and NothingToUndo, one line each, exit 1", arguments: [
        (#"{"error":"io.stopwatchd.NoSuchInterval","parameters":{"id":"abc123"}}"#, "there is no interval 'abc123' (see 'swctl log')"),
        (#"{"error":"io.stopwatchd.InvalidInterval","parameters":{"reason":"the end must be after the start (2026-11-26T09:00:00Z)"}}"#,
         "the end must be after the start (2026-11-26T09:00:00Z)"),
        (#"{"error":"io.stopwatchd.NothingToUndo","parameters":{}}"#, ClientError(refusal: .nothingToUndo).description),
    ])
    func refusals(reply: String, message: String) throws {
        let daemon = try OneCallDaemon(reply: reply)
        do {
            _ = try daemon.client.amend("abc123", note: "x")
            Issue.record("not refused")
        } catch {
            #expect(error.description == message)
            #expect(error.exitStatus == 1)
            #expect(!error.description.contains("\n"))
        }
        _ = try daemon.call()
    }
}
