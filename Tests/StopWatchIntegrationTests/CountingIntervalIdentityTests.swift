import Foundation
import Glibc
import LinuxSystem
import StopwatchProtocol
import Testing
import Varlink

/// A counting interval has its id from its start: History shows it while it counts, the
/// stopwatch's file keeps it across a `kill -9`, and the stop writes the same id. And one
/// `--history-dir` is never written by two daemons as the same device.
@Suite("the counting interval's id, and the device folder's lock, against the daemon")
struct CountingIntervalIdentityTests {
    let directory: TestDirectory
    static let deviceID = "0123456789abcdef0123456789abcdef"

    init() throws {
        directory = try TestDirectory()
    }

    func start(_ socket: String? = nil, _ arguments: [String] = []) throws -> DaemonProcess {
        try DaemonProcess(socket: socket ?? directory.socket, arguments: ["--device-id", Self.deviceID] + arguments)
    }

    func history(_ socket: String) throws -> [Interval] {
        try RawConnection.streamedHistory(socket)
    }

    func call(_ socket: String, _ method: String, _ parameters: String) throws -> JSONObject {
        let connection = try RawConnection(socket)
        try connection.call("io.stopwatchd." + method, parameters)
        guard let reply = try connection.reply() else { throw Errno(ETIMEDOUT) }
        return reply
    }

    @Test("the id History shows while an interval counts is the id of that interval in the history after the stop, across a kill -9 and a restart")
    func idFromStartAcrossKill() throws {
        var daemon = try start()
        _ = try call(daemon.socket, "Start", #"{"name":"work"}"#)
        let counting = try #require(try history(daemon.socket).first { $0.name == "work" && $0.endMs == nil })
        #expect(IntervalID.isValid(counting.id), "\(counting)")
        // The same on a second look: it is the interval's, not made for the reply.
        #expect(try history(daemon.socket).first { $0.endMs == nil }?.id == counting.id)
        #expect(daemon.stop(SIGKILL) == 128 + SIGKILL)
        daemon = try start()
        #expect(try history(daemon.socket).first { $0.endMs == nil }?.id == counting.id)
        _ = try call(daemon.socket, "Stop", #"{"name":"work"}"#)
        let ended = try history(daemon.socket)
        #expect(ended.map(\.id) == [counting.id] && ended.first?.endMs != nil, "\(ended)")
        // A new interval: a new id.
        _ = try call(daemon.socket, "Start", #"{"name":"work"}"#)
        let next = try #require(try history(daemon.socket).first { $0.endMs == nil })
        #expect(next.id != counting.id && IntervalID.isValid(next.id))
        _ = daemon
    }

    @Test("a counting stopwatch whose file has no interval_id (an earlier version's) keeps the id it is given at the restore across a kill -9")
    func idGivenAtRestoreIsSaved() throws {
        var daemon = try start()
        _ = try call(daemon.socket, "Start", #"{"name":"work"}"#)
        #expect(daemon.stop(SIGTERM) == 0)
        // The file as an earlier version wrote it: the same, without interval_id.
        let stopwatches = DaemonProcess.stateDirectory(for: directory.socket) + "/stopwatches"
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: stopwatches).first {
            (try? String(contentsOfFile: stopwatches + "/" + $0, encoding: .utf8))?.contains(#""name":"work""#) == true
        })
        let path = stopwatches + "/" + file
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let stripped = text.replacingOccurrences(of: #",?"interval_id":"[0-9a-f]{16}""#, with: "", options: .regularExpression)
        #expect(stripped != text && !stripped.contains("interval_id"), "\(text)")
        try stripped.write(toFile: path, atomically: false, encoding: .utf8)
        daemon = try start()
        let given = try #require(try history(daemon.socket).first { $0.name == "work" && $0.endMs == nil }?.id)
        #expect(IntervalID.isValid(given))
        #expect(Deadline.wait { (try? String(contentsOfFile: path, encoding: .utf8))?.contains(given) == true })
        #expect(daemon.stop(SIGKILL) == 128 + SIGKILL)
        daemon = try start()
        #expect(try history(daemon.socket).first { $0.name == "work" && $0.endMs == nil }?.id == given)
        _ = daemon
    }

    @Test("a second daemon (another state directory) given the same --history-dir and device id refuses to start, naming the held lock, having changed nothing in the folder; the first goes on")
    func sharedHistoryDirectoryLocked() throws {
        let shared = directory.path + "/shared-history"
        let first = try start(nil, ["--history-dir", shared])
        let otherSocket = directory.path + "/other/stopwatchd.sock"
        try FileManager.default.createDirectory(atPath: directory.path + "/other", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // A folder the second would prepare (unmarked, a month at its top): refused by the
        // lock before it changes anything.
        let marker = shared + "/stopwatchd-history.json"
        try FileManager.default.removeItem(atPath: marker)
        let month = #"{"name":"tea","start_ms":1790000000000,"end_ms":1790000600000,"elapsed_ms":600000}"# + "\n"
        try month.write(toFile: shared + "/2026-09.jsonl", atomically: false, encoding: .utf8)
        let second = try DaemonProcess(socket: otherSocket, arguments: ["--device-id", Self.deviceID, "--history-dir", shared], waitUntilReady: false)
        #expect(second.waitForExit().map { $0 != 0 } == true)
        #expect(second.readLog().contains("another stopwatchd writes the device folder"), "\(second.readLog())")
        #expect(!FileManager.default.fileExists(atPath: marker))
        #expect(try String(contentsOfFile: shared + "/2026-09.jsonl", encoding: .utf8) == month)
        #expect(!FileManager.default.fileExists(atPath: shared + "/" + Self.deviceID + "/2026-09.jsonl"))
        _ = try call(first.socket, "Start", #"{"name":"still"}"#)
        #expect(try history(first.socket).contains { $0.name == "still" })
    }

    @Test("--history-dir: a missing folder is created (0700) and written; one writable by others is refused at start, with a message; months left in the state directory's history/ are named in a warning")
    func historyDirectoryEndToEnd() throws {
        let made = directory.path + "/made/history"
        // Months of a history kept in the state directory before.
        let oldHistory = DaemonProcess.stateDirectory(for: directory.socket) + "/history"
        try FileManager.default.createDirectory(atPath: oldHistory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(chmod(DaemonProcess.stateDirectory(for: directory.socket), 0o700) == 0)
        try #"{"name":"tea","start_ms":1790000000000,"end_ms":1790000600000,"elapsed_ms":600000}"#.appending("\n")
            .write(toFile: oldHistory + "/2026-09.jsonl", atomically: false, encoding: .utf8)
        let daemon = try start(nil, ["--history-dir", made])
        _ = try call(daemon.socket, "Start", #"{"name":"work"}"#)
        _ = try call(daemon.socket, "Stop", #"{"name":"work"}"#)
        #expect(try history(daemon.socket).map(\.name) == ["work"])
        var info = stat()
        #expect(stat(made, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(FileManager.default.fileExists(atPath: made + "/stopwatchd-history.json"))
        #expect(daemon.readLog().contains("2026-09.jsonl") && daemon.readLog().contains("is not read nor moved"), "\(daemon.readLog())")
        #expect(daemon.stop(SIGTERM) == 0)
        let open = directory.path + "/open-history"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false)
        #expect(chmod(open, 0o777) == 0)
        let refused = try DaemonProcess(socket: directory.socket, arguments: ["--device-id", Self.deviceID, "--history-dir", open], waitUntilReady: false)
        #expect(refused.waitForExit().map { $0 != 0 } == true)
        #expect(refused.readLog().contains("refusing the history folder"), "\(refused.readLog())")
    }
}
