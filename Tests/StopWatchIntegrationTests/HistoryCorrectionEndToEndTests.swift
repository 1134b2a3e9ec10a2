import Foundation
import Glibc
import LinuxSystem
import StopwatchProtocol
import Testing
import Varlink

/// Corrections of the history against a real daemon: on disk before the reply, the same
/// after `kill -9`, and the last release's history folder moved into format 2.
@Suite("history corrections: Track, Amend, Delete, Undo against the daemon")
struct HistoryCorrectionEndToEndTests {
    let directory: TestDirectory
    static let deviceID = "0123456789abcdef0123456789abcdef"
    static let hour: Int64 = 3_600_000

    init() throws {
        directory = try TestDirectory()
    }

    var stateDirectory: String { DaemonProcess.stateDirectory(for: directory.socket) }

    func start() throws -> DaemonProcess {
        try DaemonProcess(socket: directory.socket, arguments: ["--device-id", Self.deviceID, "--device-name", "test-box"])
    }

    static var now: Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// One call's reply; the connection's error, if it answered with one, as `error`.
    func call(_ connection: RawConnection, _ method: String, _ parameters: String = "{}") throws -> JSONObject {
        try connection.call("io.stopwatchd." + method, parameters)
        guard let reply = try connection.reply() else { throw Errno(ETIMEDOUT) }
        return reply
    }

    func interval(_ reply: JSONObject) -> Interval? {
        guard case .object(let parameters)? = reply["parameters"], let json = parameters["interval"] else { return nil }
        return try? Interval(json: json)
    }

    func streamedHistory(_ socket: String) throws -> [Interval] {
        try RawConnection.streamedHistory(socket)
    }

    @Test("Track, Amend, Delete and Undo through varlink, then kill -9 and a restart: the same History")
    func correctionsSurviveKill() throws {
        var daemon = try start()
        let connection = try RawConnection(daemon.socket)
        let now = Self.now
        let tracked = try #require(interval(try call(connection, "Track", #"{"name":"work","start_ms":\#(now - 5 * Self.hour),"end_ms":\#(now - 4 * Self.hour),"note":"plan"}"#)))
        #expect(tracked.device == "test-box" && tracked.note == "plan" && IntervalID.isValid(tracked.id))
        let other = try #require(interval(try call(connection, "Track", #"{"name":"work","start_ms":\#(now - 3 * Self.hour),"end_ms":\#(now - 2 * Self.hour)}"#)))
        let amended = try #require(interval(try call(connection, "Amend", #"{"id":"\#(tracked.id.prefix(8))","end_ms":\#(now - 3 * Self.hour - 60_000)}"#)))
        #expect(amended.id == tracked.id && amended.elapsedMs == 2 * Self.hour - 60_000)
        // Overlapping the other one of its name: refused.
        let refused = try call(connection, "Amend", #"{"id":"\#(tracked.id)","end_ms":\#(now - 2 * Self.hour - 60_000)}"#)
        #expect(refused["error"] == .string("io.stopwatchd.InvalidInterval"))
        #expect(interval(try call(connection, "Delete", #"{"id":"\#(other.id)"}"#))?.id == other.id)
        let undone = try call(connection, "Undo")
        guard case .object(let undoParameters)? = undone["parameters"] else { throw Errno(EPROTO) }
        #expect(undoParameters["undone"] == .string("delete"))
        let before = try streamedHistory(daemon.socket)
        #expect(before.map(\.id) == [tracked.id, other.id])
        #expect(before.first == amended)
        #expect(daemon.stop(SIGKILL) == 128 + SIGKILL)
        daemon = try start()
        #expect(try streamedHistory(daemon.socket) == before)
        _ = daemon
    }

    /// The last release's history folder: months directly in history/, lines without ids.
    static let lastReleaseMonth = [
        #"{"name":"tea","start_ms":1790000000000,"end_ms":1790000600000,"elapsed_ms":600000}"#,
        #"{"name":"café","start_ms":1790001000000,"end_ms":1790004600000,"elapsed_ms":3599000}"#,
        #"{"name":"tea","start_ms":1790005000000,"end_ms":1790005060000,"elapsed_ms":60000}"#,
    ].joined(separator: "\n") + "\n"

    @Test("the last release's history/2026-10.jsonl is moved into the device folder on the first start, byte for byte, with the marker written; History the same, ids derived and stable across restarts")
    func migration() throws {
        let history = stateDirectory + "/history"
        try FileManager.default.createDirectory(atPath: history, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: stateDirectory)
        try Data(Self.lastReleaseMonth.utf8).write(to: URL(fileURLWithPath: history + "/2026-10.jsonl"))
        var daemon = try start()
        #expect(daemon.waitForLog(containing: "moved the history's 2026-10.jsonl"), "\(daemon.readLog())")
        let first = try streamedHistory(daemon.socket)
        #expect(first.map(\.name) == ["tea", "café", "tea"])
        #expect(first.map(\.elapsedMs) == [600_000, 3_599_000, 60_000])
        #expect(first.allSatisfy { IntervalID.isValid($0.id) && $0.device == "test-box" })
        #expect(Set(first.map(\.id)).count == 3)
        let moved = try String(contentsOfFile: history + "/" + Self.deviceID + "/2026-10.jsonl", encoding: .utf8)
        #expect(moved == Self.lastReleaseMonth)
        #expect(!FileManager.default.fileExists(atPath: history + "/2026-10.jsonl"))
        #expect(try String(contentsOfFile: history + "/stopwatchd-history.json", encoding: .utf8) == #"{"format":2}"# + "\n")
        let device = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: history + "/" + Self.deviceID + "/device.json"))))
        #expect(device == .object(["id": .string(Self.deviceID), "name": .string("test-box"), "host": .string(ProcessInfo.processInfo.hostName)]))
        #expect(daemon.stop(SIGKILL) == 128 + SIGKILL)
        daemon = try start()
        #expect(try streamedHistory(daemon.socket) == first)
        #expect(!daemon.readLog().contains("moved the history"))
        _ = daemon
    }

    @Test("a history folder of an unknown format is refused at start, with a message")
    func unknownFormatRefused() throws {
        let history = stateDirectory + "/history"
        try FileManager.default.createDirectory(atPath: history, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: stateDirectory)
        try Data(#"{"format":3}"#.utf8).write(to: URL(fileURLWithPath: history + "/stopwatchd-history.json"))
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--device-id", Self.deviceID], waitUntilReady: false)
        #expect(daemon.waitForExit().map { $0 != 0 } == true)
        #expect(daemon.readLog().contains("is in format 3, which this stopwatchd does not know"), "\(daemon.readLog())")
    }

    @Test("kill -9 at random moments during at least 200 corrections (Track, Amend, Delete, Undo; one in flight at each kill) never leaves a history History cannot read, nor loses a correction that was answered")
    func killDuringCorrections() throws {
        var generator = SystemRandomNumberGenerator()
        let base = Self.now - 30 * 24 * Self.hour
        /// What the answers say of each interval tracked: present or deleted, its note, and
        /// what a request sent but not answered before a kill may have done (any may have
        /// landed): notes it may have, whether it may be deleted.
        struct Expected {
            var deleted = false
            var note: String?
            var maybeNotes: Set<String> = []
            var maybeDeleted = false
        }
        var model: [String: Expected] = [:]
        /// Tracks sent but not answered: each may be in the history, with an id not known.
        var tracksInFlight = 0
        var sent = 0
        var slot: Int64 = 0
        func live() -> [String] { model.filter { !$0.value.deleted }.map(\.key).sorted() }
        func parameters(_ reply: JSONObject) -> JSONObject? {
            if case .object(let parameters)? = reply["parameters"] { parameters } else { nil }
        }
        while sent < 200 {
            let daemon = try start()
            let connection = try RawConnection(daemon.socket)
            for _ in 0..<Int.random(in: 5...30, using: &generator) {
                sent += 1
                let ids = live()
                let choice = ids.isEmpty ? 0 : Int.random(in: 0..<10, using: &generator)
                if choice < 4 {
                    slot += 1
                    let reply = try call(connection, "Track", #"{"name":"loop","start_ms":\#(base + slot * 60_000),"end_ms":\#(base + slot * 60_000 + 30_000)}"#)
                    let made = try #require(interval(reply), "\(reply)")
                    model[made.id] = Expected()
                } else if choice < 7 {
                    let id = ids.randomElement(using: &generator)!
                    let note = "n\(sent)"
                    let reply = try call(connection, "Amend", #"{"id":"\#(id)","note":"\#(note)"}"#)
                    if let amended = interval(reply) {
                        #expect(amended.note == note)
                        model[id]?.note = note
                        model[id]?.maybeNotes = []
                        model[id]?.maybeDeleted = false
                    } else {
                        // Refused only as deleted by a delete sent before a kill, which landed.
                        #expect(model[id]?.maybeDeleted == true, "\(reply)")
                        model[id]?.deleted = true
                    }
                } else if choice < 9 {
                    let id = ids.randomElement(using: &generator)!
                    let reply = try call(connection, "Delete", #"{"id":"\#(id)"}"#)
                    #expect(interval(reply)?.id == id || model[id]?.maybeDeleted == true, "\(reply)")
                    model[id]?.deleted = true
                } else {
                    let reply = try call(connection, "Undo")
                    guard let undone = parameters(reply), let restored = interval(reply) else {
                        #expect(reply["error"] == .string("io.stopwatchd.NothingToUndo"), "\(reply)")
                        continue
                    }
                    // The reply says what the interval is now: believed, as any answer is.
                    guard model[restored.id] != nil else {
                        // A track sent before a kill, which landed: taken back now.
                        #expect(undone["undone"] == .string("track"))
                        tracksInFlight -= 1
                        continue
                    }
                    var expected = Expected()
                    expected.deleted = undone["undone"] == .string("track")
                    expected.note = restored.note
                    model[restored.id] = expected
                }
            }
            // One more sent, and the daemon killed at once: before, while or after it is written.
            let ids = live()
            switch ids.isEmpty ? 0 : Int.random(in: 0..<3, using: &generator) {
            case 0:
                sent += 1
                slot += 1
                try connection.call("io.stopwatchd.Track", #"{"name":"loop","start_ms":\#(base + slot * 60_000),"end_ms":\#(base + slot * 60_000 + 30_000)}"#)
                tracksInFlight += 1
            case 1:
                sent += 1
                let id = ids.randomElement(using: &generator)!
                let note = "n\(sent)"
                try connection.call("io.stopwatchd.Amend", #"{"id":"\#(id)","note":"\#(note)"}"#)
                model[id]?.maybeNotes.insert(note)
            default:
                sent += 1
                let id = ids.randomElement(using: &generator)!
                try connection.call("io.stopwatchd.Delete", #"{"id":"\#(id)"}"#)
                model[id]?.maybeDeleted = true
            }
            if Bool.random(using: &generator) { usleep(UInt32.random(in: 0...2000, using: &generator)) }
            #expect(daemon.stop(SIGKILL) == 128 + SIGKILL)
        }
        let daemon = try start()
        let intervals = try streamedHistory(daemon.socket)
        let byID = Dictionary(intervals.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for (id, expected) in model {
            if expected.deleted {
                #expect(byID[id] == nil, "\(id) was deleted, and is there")
            } else if let found = byID[id] {
                let noteFits = found.note == expected.note || found.note.map(expected.maybeNotes.contains) == true
                #expect(noteFits, "\(id): \(found.note ?? "none"), expected \(expected)")
            } else {
                #expect(expected.maybeDeleted, "\(id) lost: \(expected)")
            }
        }
        let unknown = intervals.filter { model[$0.id] == nil }
        #expect(unknown.count <= max(tracksInFlight, 0), "\(unknown.count) intervals not answered, \(tracksInFlight) tracks in flight")
        #expect(!daemon.readLog().contains("damaged correction"))
    }
}
