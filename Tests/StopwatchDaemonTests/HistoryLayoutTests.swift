import Foundation
import Glibc
import LinuxSystem
@testable import StopwatchDaemon
import TestSupport
import Testing

/// The history folder made format 2 (`HistoryLayout`, `HistoryFolder`): the months of the
/// release before moved, duplicates, the marker, `device.json`, failures that must not stop
/// the daemon and refusals that must, and the device folder's lock. A temporary folder.
@Suite("history folder layout")
final class HistoryLayoutTests {
    let root: String
    let logged = Locked<[String]>([])
    static let deviceID = "0123456789abcdef0123456789abcdef"

    init() throws {
        var template = Array("/tmp/swlayout-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    func folder(name: String = "box") -> HistoryFolder {
        let logger = Logger(minimumLevel: .info, journald: false) { [logged] line in logged.withLock { $0.append(line) } }
        let layout = HistoryLayout(deviceID: Self.deviceID, deviceName: name, hostName: "host", trust: .currentProcess, logger: logger)
        let path = root
        return HistoryFolder(layout: layout, path: path, openRoot: { () throws(Errno) in try DirectoryDescriptor.open(path) })
    }

    func write(_ text: String, _ name: String) throws {
        try text.write(toFile: root + "/" + name, atomically: false, encoding: .utf8)
    }

    func read(_ name: String) -> String? {
        try? String(contentsOfFile: root + "/" + name, encoding: .utf8)
    }

    var device: String { Self.deviceID }

    @Test("a month of the release before is moved into the device folder; an identical copy already there is removed from the top; the marker is written")
    func identicalDuplicateRemoved() throws {
        try write("a\n", "2026-09.jsonl")
        try FileManager.default.createDirectory(atPath: root + "/" + device, withIntermediateDirectories: false)
        try write("b\n", device + "/2026-10.jsonl")
        try write("b\n", "2026-10.jsonl")
        try folder().prepareAtStart()
        #expect(read(device + "/2026-09.jsonl") == "a\n" && read("2026-09.jsonl") == nil)
        #expect(read(device + "/2026-10.jsonl") == "b\n" && read("2026-10.jsonl") == nil)
        #expect(read("stopwatchd-history.json") == "{\"format\":2}\n")
        #expect(read(device + "/device.json")?.contains("\"name\":\"box\"") == true)
    }

    @Test("a move interrupted part-way (some months in the device folder, some still at the top, no marker) is finished at the next start")
    func interruptedMoveFinished() throws {
        try FileManager.default.createDirectory(atPath: root + "/" + device, withIntermediateDirectories: false)
        try write("moved\n", device + "/2026-09.jsonl")
        try write("not yet\n", "2026-10.jsonl")
        try folder().prepareAtStart()
        #expect(read(device + "/2026-09.jsonl") == "moved\n" && read(device + "/2026-10.jsonl") == "not yet\n")
        #expect(read("2026-10.jsonl") == nil && read("stopwatchd-history.json") == "{\"format\":2}\n")
    }

    @Test("a differing duplicate is left at the top, the folder unmarked, named in the log and in the status; a link with a month's name too, with a clear message")
    func differingDuplicateLeft() throws {
        try FileManager.default.createDirectory(atPath: root + "/" + device, withIntermediateDirectories: false)
        try write("mine\n", device + "/2026-10.jsonl")
        try write("theirs\n", "2026-10.jsonl")
        try write("mine\n", device + "/2026-11.jsonl")
        try FileManager.default.createSymbolicLink(atPath: root + "/2026-11.jsonl", withDestinationPath: "/etc/passwd")
        do {
            // Released at the end of the block, with the device folder's lock.
            let made = folder()
            try made.prepareAtStart()
            #expect(made.monthsLeftAtTop?.contains("2026-10.jsonl, 2026-11.jsonl") == true, "\(made.monthsLeftAtTop ?? "none")")
        }
        #expect(read("2026-10.jsonl") == "theirs\n" && read(device + "/2026-10.jsonl") == "mine\n")
        #expect(read("stopwatchd-history.json") == nil)
        #expect(logged.withLock { $0 }.contains { $0.contains("2026-10.jsonl") && $0.contains("differ") })
        #expect(logged.withLock { $0 }.contains { $0.contains("2026-11.jsonl is not a regular file") })
        // Tried again at the next start: resolved by hand, the folder is marked.
        try FileManager.default.removeItem(atPath: root + "/2026-10.jsonl")
        try FileManager.default.removeItem(atPath: root + "/2026-11.jsonl")
        let again = folder()
        try again.prepareAtStart()
        #expect(read("stopwatchd-history.json") != nil && again.monthsLeftAtTop == nil)
    }

    @Test("a marker that is empty, not a regular file, or of format 3 is refused")
    func markerRefused() throws {
        try write("", "stopwatchd-history.json")
        #expect(throws: HistoryLayout.Refusal.self) { try self.folder().prepareAtStart() }
        try FileManager.default.removeItem(atPath: root + "/stopwatchd-history.json")
        try FileManager.default.createDirectory(atPath: root + "/stopwatchd-history.json", withIntermediateDirectories: false)
        #expect(throws: HistoryLayout.Refusal.self) { try self.folder().prepareAtStart() }
        try FileManager.default.removeItem(atPath: root + "/stopwatchd-history.json")
        try write(#"{"format":3}"#, "stopwatchd-history.json")
        do {
            try folder().prepareAtStart()
            Issue.record("format 3 accepted")
        } catch {
            #expect(error.description.contains("format 3"))
        }
    }

    @Test("device.json is written again when the name changes, keeping the host of its first making")
    func deviceFileRenamed() throws {
        try folder(name: "old").prepareAtStart()
        try write(#"{"id":"\#(device)","name":"old","host":"first-host"}"#, device + "/device.json")
        try folder(name: "new").prepareAtStart()
        let text = read(device + "/device.json") ?? ""
        #expect(text.contains("\"name\":\"new\"") && text.contains("\"host\":\"first-host\""), "\(text)")
    }

    @Test("an I/O failure preparing the folder (the marker cannot be written) does not refuse the start: logged, in startProblem, done at the first write")
    func ioFailureDoesNotRefuse() throws {
        try write("a\n", "2026-09.jsonl")
        // The marker's temporary name taken by a folder with something in it: its write fails (EEXIST).
        try FileManager.default.createDirectory(atPath: root + "/.stopwatchd-history.json.tmp/x", withIntermediateDirectories: true)
        // device.json cannot be written either: logged, never a refusal.
        try FileManager.default.createDirectory(atPath: root + "/" + device + "/.device.json.tmp/x", withIntermediateDirectories: true)
        let made = folder()
        try made.prepareAtStart()
        #expect(made.startProblem?.contains("tried again at the first write") == true, "\(made.startProblem ?? "none")")
        #expect(logged.withLock { $0 }.contains { $0.contains("cannot write") && $0.contains("device.json") })
        try FileManager.default.removeItem(atPath: root + "/.stopwatchd-history.json.tmp")
        let opened = try made.openDeviceFolder()
        opened.close()
        #expect(read("stopwatchd-history.json") != nil && read(device + "/2026-09.jsonl") == "a\n")
    }

    @Test("a device folder not trusted (another owner's mode bits: writable by others) is refused")
    func untrustedDeviceFolder() throws {
        try FileManager.default.createDirectory(atPath: root + "/" + device, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        #expect(chmod(root + "/" + device, 0o777) == 0)
        #expect(throws: HistoryLayout.Refusal.self) { try self.folder().prepareAtStart() }
    }

    @Test("a second folder object (another daemon) on the same device folder is refused while the first holds its lock")
    func deviceFolderLocked() throws {
        let first = folder()
        try first.prepareAtStart()
        do {
            try folder().prepareAtStart()
            Issue.record("a second daemon was let write the same device folder")
        } catch {
            #expect(error.description.contains("another stopwatchd writes the device folder"))
        }
        _ = first
    }
}
