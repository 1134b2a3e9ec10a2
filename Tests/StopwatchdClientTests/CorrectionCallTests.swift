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
    /// A socket that takes one connection, and answers each call it reads (up to its NUL)
    /// with the next of `replies`; after the last it reads on until the client closes, so
    /// that a call sent after it is seen too. `calls` are the calls it read, parsed.
    final class OneCallDaemon: @unchecked Sendable {
        // @unchecked: `received` is written by the accepting thread before it signals
        // `done`, and read only after `done` is waited on.
        let path: String
        private let listener: CInt
        private var received: [[UInt8]] = []
        private let done = DispatchSemaphore(value: 0)

        convenience init(reply: String) throws {
            try self.init(replies: [reply])
        }

        init(replies: [String]) throws {
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
                var messages: [[UInt8]] = []
                var answered = 0
                while true {
                    // Whole messages first: a client may send two calls in one write.
                    while let end = bytes.firstIndex(of: 0) {
                        messages.append(Array(bytes[..<end]))
                        bytes.removeSubrange(...end)
                        if answered < replies.count {
                            let answer = Array(replies[answered].utf8) + [0]
                            _ = answer.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                            answered += 1
                        }
                    }
                    let count = read(connection, &buffer, buffer.count)
                    guard count > 0 else { break }
                    bytes += buffer[0..<count]
                }
                received = messages
                close(connection)
                done.signal()
            }
        }

        /// The calls read, in order: each one's method and parameters (by key: the client's
        /// order is its own). Throws if the client has not closed within 30 s (one that never
        /// connects fails the test, not hangs it). Once per daemon.
        func calls() throws -> [(method: String, parameters: [String: JSONValue])] {
            defer {
                close(listener)
                unlink(path)
            }
            guard done.wait(timeout: .now() + 30) == .success else { throw CocoaError(.fileReadUnknown) }
            return try received.map { message in
                guard case .object(let object) = try JSONParser.parse(message),
                    case .string(let method)? = object["method"]
                else { throw CocoaError(.fileReadCorruptFile) }
                guard case .object(let parameters)? = object["parameters"] else { return (method, [:]) }
                return (method, Dictionary(uniqueKeysWithValues: parameters.members.map { ($0.key, $0.value) }))
            }
        }

        /// The one call read, after the description asked first when the call needs it.
        func call() throws -> (method: String, parameters: [String: JSONValue]) {
            let calls = try calls()
            guard let last = calls.last else { throw CocoaError(.fileReadCorruptFile) }
            return last
        }

        var client: StopwatchClient { StopwatchClient(socketPath: path, timeout: .seconds(30)) }
    }

    static let stopwatchReply = #"{"parameters":{"stopwatch":{"name":"work","state":"counting","elapsed_ms":600000,"laps_ms":[],"note":"the parser"}}}"#
    /// The description of `io.stopwatchd` a daemon of this release gives, and one of the
    /// release before (Start without `at_ms` and `note`).
    static let currentDescription = #"{"parameters":{"description":"interface io.stopwatchd\nmethod Start(name: ?string, at_ms: ?int, note: ?string) -> (stopwatch: Stopwatch)\n"}}"#
    static let previousDescription = #"{"parameters":{"description":"interface io.stopwatchd\nmethod Start(name: ?string) -> (stopwatch: Stopwatch)\n"}}"#
    static let intervalJSON = #"{"id":"0123456789abcdef","name":"work","start_ms":1000,"end_ms":61000,"elapsed_ms":60000,"note":"why","device":"desk"}"#
    static let interval = Interval(id: "0123456789abcdef", name: "work", startMs: 1_000, endMs: 61_000, elapsedMs: 60_000, note: "why", device: "desk")

    @Test("start with at_ms and note asks the interface's description first, then starts; the reply's note is read")
    func startInThePast() throws {
        let daemon = try OneCallDaemon(replies: [Self.currentDescription, Self.stopwatchReply])
        let stopwatch = try daemon.client.start("work", at: 1_795_683_000_000, note: "the parser")
        let calls = try daemon.calls()
        #expect(calls.map(\.method) == ["org.varlink.service.GetInterfaceDescription", "io.stopwatchd.Start"])
        #expect(calls.first?.parameters == ["interface": .string("io.stopwatchd")])
        #expect(calls.last?.parameters == ["name": .string("work"), "at_ms": .int(1_795_683_000_000), "note": .string("the parser")])
        #expect(stopwatch.note == "the parser")
    }

    @Test("stop and toggle without at_ms or note send neither, and ask no description")
    func nothingAbsentSent() throws {
        let stop = try OneCallDaemon(reply: Self.stopwatchReply)
        _ = try stop.client.stop("work")
        let calls = try stop.calls()
        #expect(calls.map(\.method) == ["io.stopwatchd.Stop"])
        #expect(calls.first?.parameters == ["name": .string("work")])
        let toggle = try OneCallDaemon(replies: [Self.currentDescription, Self.stopwatchReply])
        _ = try toggle.client.toggle(nil, at: 5)
        #expect(try toggle.call().parameters == ["at_ms": .int(5)])
    }

    @Test("a daemon of the previous release, which would ignore at_ms or note, gets no command: too old, exit 70", arguments: [
        ("--at", 1_795_683_000_000 as Int64?, nil as String?), ("--note", nil, "the parser"), ("--at", 5, "the parser"),
    ])
    func previousReleaseRefusedBeforeTheCommand(feature: String, at: Int64?, note: String?) throws {
        for method in ["Start", "Stop", "Toggle"] where note == nil || method != "Stop" {
            let daemon = try OneCallDaemon(replies: [Self.previousDescription, Self.stopwatchReply])
            do {
                switch method {
                case "Start": _ = try daemon.client.start("work", at: at, note: note)
                case "Stop": _ = try daemon.client.stop("work", at: at)
                default: _ = try daemon.client.toggle("work", at: at, note: note)
                }
                Issue.record("\(method) went on with a daemon too old for \(feature)")
            } catch {
                #expect(error == .daemonTooOld(feature: feature))
                #expect(error.exitStatus == 70)
                #expect(error.description == "this stopwatchd is too old for \(feature) (restart it after the upgrade)")
            }
            // Nothing but the question: the command that would have changed something never went.
            #expect(try daemon.calls().map(\.method) == ["org.varlink.service.GetInterfaceDescription"])
        }
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
