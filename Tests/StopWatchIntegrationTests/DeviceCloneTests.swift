import Foundation
import Glibc
import LinuxSystem
import StopwatchdClient
import StopwatchProtocol
import Testing

/// Two machines with one device id (a cloned machine image) must not both write its folder:
/// real daemons, the other machine played by files replaced by rename as Syncthing carries
/// another writer's appends (docs/DEVICES.md "One id per machine").
@Suite("cloned machine image: one device id, two writers")
struct DeviceCloneTests {
    let directory: TestDirectory
    static let deviceID = "00112233445566778899aabbccddeeff"

    init() throws {
        directory = try TestDirectory()
    }

    var stateDirectory: String { DaemonProcess.stateDirectory(for: directory.socket) }
    var deviceFolder: String { stateDirectory + "/history/" + Self.deviceID }
    var recordPath: String { stateDirectory + "/history-own.json" }

    func start(waitUntilReady: Bool = true, notify: String? = nil) throws -> DaemonProcess {
        try DaemonProcess(
            socket: directory.socket, arguments: ["--device-id", Self.deviceID],
            environment: notify.map { ["NOTIFY_SOCKET": $0] } ?? [:], waitUntilReady: waitUntilReady
        )
    }

    /// The one month file this daemon wrote.
    func monthFile() throws -> String {
        let months = try FileManager.default.contentsOfDirectory(atPath: deviceFolder).filter { $0.hasSuffix(".jsonl") }
        try #require(months.count == 1, "\(months)")
        return deviceFolder + "/" + months[0]
    }

    /// Replaces `path` by a new file holding `bytes`, renamed over it: a new inode, as a sync
    /// tool writes.
    func replace(_ path: String, with bytes: Data) throws {
        let temporary = (path as NSString).deletingLastPathComponent + "/.syncthing.replace.tmp"
        try bytes.write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, path) == 0)
    }

    func inode(_ path: String) throws -> UInt64 {
        var status = stat()
        guard stat(path, &status) == 0 else { throw Errno(errno) }
        return UInt64(status.st_ino)
    }

    /// Every file under the history folder and its bytes.
    func historyContents() throws -> [String: Data] {
        let root = stateDirectory + "/history"
        var files: [String: Data] = [:]
        for name in try FileManager.default.subpathsOfDirectory(atPath: root) {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + name))
            }
        }
        return files
    }

    /// A month file as the other machine left it: this one's lines and one more of its own.
    func longerCopy(of month: String) throws -> Data {
        let mine = try String(contentsOfFile: month, encoding: .utf8)
        let line = try #require(mine.split(separator: "\n").first.map(String.init))
        return Data((mine + line.replacingOccurrences(of: #""name":"work""#, with: #""name":"twin""#) + "\n").utf8)
    }

    @Test("a month file replaced by a longer one while the daemon was stopped: the next start is refused with a message naming --device-id and the record, the history folder unchanged; a same-size restore starts")
    func cloneRefusedAtStart() throws {
        do {
            let daemon = try start()
            let client = StopwatchClient(socketPath: daemon.socket)
            _ = try client.start("work")
            _ = try client.stop("work")
            #expect(daemon.stop() == 0)
        }
        #expect(FileManager.default.fileExists(atPath: recordPath))
        let month = try monthFile()
        let original = try Data(contentsOf: URL(fileURLWithPath: month))
        let originalInode = try inode(month)
        try replace(month, with: try longerCopy(of: month))
        let before = try historyContents()
        let refused = try start(waitUntilReady: false)
        #expect(refused.waitForExit() == 1)
        let log = refused.readLog()
        #expect(log.contains("another stopwatchd with this device id") && log.contains("--device-id") && log.contains("systemd-id128 new"), "\(log)")
        #expect(log.contains(deviceFolder) && log.contains(recordPath), "\(log)")
        #expect(try historyContents() == before)

        // Put back as it was, by a copy (another inode, the same size): accepted, and said.
        try replace(month, with: original)
        let restored = try start()
        // (The file system may give the copy the inode the original had, freed by the rename:
        // then it is the same file to the check, and nothing is said.)
        if try inode(month) != originalInode {
            #expect(restored.waitForLog(containing: "taken as a copy or restore"), "\(restored.readLog())")
        }
        #expect(try RawConnection.streamedHistory(restored.socket).map(\.name) == ["work"])
    }

    @Test("a month file replaced while the daemon writes it: the Stop is refused with the reason, the status says it, nothing is written; after a restart with the record deleted the stopwatch still has its time")
    func cloneRefusedAtRunTime() throws {
        let notify = try SystemdNotifyTests.NotifySocket(path: directory.file("notify"))
        var elapsedBefore: Int64 = 0
        do {
            let daemon = try start(notify: notify.path)
            let client = StopwatchClient(socketPath: daemon.socket)
            _ = try client.start("work")
            _ = try client.stop("work")
            _ = try client.start("work")
            let month = try monthFile()
            try replace(month, with: try longerCopy(of: month))
            let replaced = try Data(contentsOf: URL(fileURLWithPath: month))
            do {
                _ = try client.stop("work")
                Issue.record("the Stop was not refused")
            } catch {
                #expect("\(error)".contains("another stopwatchd with this device id"), "\(error)")
            }
            let still = try client.get("work")
            #expect(still.state == .counting)
            elapsedBefore = still.elapsedMs
            #expect(notify.message(containing: "STATUS=1 stopwatch, 1 counting, 0 watched; history: another stopwatchd with this device id") != nil)
            #expect(daemon.readLog().contains("was replaced while this daemon wrote it"), "\(daemon.readLog())")
            // Nothing written to the other machine's file (nor open.json).
            #expect(try Data(contentsOf: URL(fileURLWithPath: month)) == replaced)
            #expect(daemon.stop() == 0)
        }
        // The next start is refused too: the file is not as this daemon left it.
        let refused = try start(waitUntilReady: false)
        #expect(refused.waitForExit() == 1)
        // Taken as this machine's on purpose: the record deleted, the stopwatch's time is there.
        try FileManager.default.removeItem(atPath: recordPath)
        let daemon = try start()
        let client = StopwatchClient(socketPath: daemon.socket)
        let counting = try client.get("work")
        #expect(counting.state == .counting && counting.elapsedMs >= elapsedBefore)
        _ = try client.stop("work")
        #expect(try RawConnection.streamedHistory(daemon.socket).map(\.name).sorted() == ["twin", "work", "work"])
    }

    @Test("a Stop dated into an earlier month whose file was replaced (not the file kept open): refused before the change, the file untouched")
    func cloneRefusedForDatedStopIntoAnotherMonth() throws {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nowMs = Int64(now.tv_sec) * 1000
        var time = time_t(now.tv_sec)
        var parts = tm()
        gmtime_r(&time, &parts)
        parts.tm_mday = 1
        (parts.tm_hour, parts.tm_min, parts.tm_sec) = (0, 0, 0)
        let monthStartMs = Int64(timegm(&parts)) * 1000
        let hour: Int64 = 3_600_000
        let daemon = try start()
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("old", at: monthStartMs - 4 * hour)
        _ = try client.stop("old", at: monthStartMs - 3 * hour)
        // Now the current month's file is the one kept open.
        _ = try client.start("work")
        _ = try client.stop("work")
        #expect(nowMs > monthStartMs)
        var stamp = tm()
        var earlier = time_t((monthStartMs - hour) / 1000)
        gmtime_r(&earlier, &stamp)
        let previous = deviceFolder + String(format: "/%04d-%02d.jsonl", Int(stamp.tm_year) + 1900, Int(stamp.tm_mon) + 1)
        let mine = try String(contentsOfFile: previous, encoding: .utf8)
        try replace(previous, with: Data((mine + mine.replacingOccurrences(of: #""name":"old""#, with: #""name":"twin""#)).utf8))
        let replaced = try Data(contentsOf: URL(fileURLWithPath: previous))
        _ = try client.start("old", at: monthStartMs - 2 * hour)
        do {
            _ = try client.stop("old", at: monthStartMs - hour)
            Issue.record("the dated Stop was not refused")
        } catch {
            #expect("\(error)".contains("another stopwatchd with this device id"), "\(error)")
        }
        #expect(try client.get("old").state == .counting)
        #expect(try Data(contentsOf: URL(fileURLWithPath: previous)) == replaced)
    }
}
