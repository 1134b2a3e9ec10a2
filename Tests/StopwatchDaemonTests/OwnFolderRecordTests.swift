import Foundation
import Glibc
import LinuxSystem
@testable import StopwatchDaemon
import TestSupport
import Testing

/// The guard against a second machine with this device id (a cloned machine image):
/// `OwnFolderRecord.check`'s decision over (record, what the device folder holds), the
/// record's file, and the start-up check through `HistoryFolder` refusing before anything
/// in the folder changes. Real daemons: `DeviceCloneTests`.
@Suite("own device folder record")
struct OwnFolderRecordTests {
    typealias Mark = OwnFolderRecord.Mark
    static let folder = "/h/0123456789abcdef0123456789abcdef"

    /// 2026-11-10 00:00 UTC: the last check's month is November 2026.
    static let checkedInNovember: Int64 = 1_794_268_800_000

    func record(_ months: [String: Mark], checkedMs: Int64 = checkedInNovember) -> OwnFolderRecord {
        OwnFolderRecord(folder: Self.folder, checkedMs: checkedMs, months: months)
    }

    func onDisk(_ months: [String: Mark], conflicts: [(String, Int64)] = []) -> OwnFolderRecord.OnDisk {
        OwnFolderRecord.OnDisk(months: months, conflictCopies: conflicts.map { (name: $0.0, changedMs: $0.1) })
    }

    func isRefused(_ verdict: OwnFolderRecord.Verdict) -> Bool {
        if case .refuse = verdict { true } else { false }
    }

    @Test("no record (a first start, a state directory lost): the folder is accepted as it is")
    func noRecordAccepts() {
        let verdict = OwnFolderRecord.check(nil, folder: Self.folder, onDisk: onDisk(["2026-11.jsonl": Mark(inode: 7, size: 900)]))
        #expect(verdict == .accept(notes: []))
    }

    @Test("the same inode, grown (appends after the record, a crash) or equal: this daemon's own")
    func sameInodeGrownAccepts() {
        let recorded = record(["2026-10.jsonl": Mark(inode: 5, size: 100), "2026-11.jsonl": Mark(inode: 7, size: 300)])
        let verdict = OwnFolderRecord.check(recorded, folder: Self.folder, onDisk: onDisk([
            "2026-10.jsonl": Mark(inode: 5, size: 100), "2026-11.jsonl": Mark(inode: 7, size: 450),
        ]))
        #expect(verdict == .accept(notes: []))
    }

    @Test("another inode of another size (a sync tool carried another writer's appends): refused, naming the file and both sizes")
    func replacedAndResizedRefuses() {
        let recorded = record(["2026-11.jsonl": Mark(inode: 7, size: 300)])
        for size: Int64 in [450, 120] {
            let verdict = OwnFolderRecord.check(recorded, folder: Self.folder, onDisk: onDisk(["2026-11.jsonl": Mark(inode: 9, size: size)]))
            guard case .refuse(let reasons) = verdict else {
                Issue.record("accepted a replaced month of \(size) bytes")
                continue
            }
            #expect(reasons.count == 1)
            #expect(reasons[0].contains("2026-11.jsonl") && reasons[0].contains("\(size) bytes") && reasons[0].contains("300 bytes"), "\(reasons)")
        }
    }

    @Test("another inode of the same size (cp -a, a restore from a backup): accepted, with a note")
    func sameSizeCopyAccepts() {
        let recorded = record(["2026-11.jsonl": Mark(inode: 7, size: 300)])
        let verdict = OwnFolderRecord.check(recorded, folder: Self.folder, onDisk: onDisk(["2026-11.jsonl": Mark(inode: 9, size: 300)]))
        guard case .accept(let notes) = verdict else { Issue.record("refused a same-size copy"); return }
        #expect(notes.count == 1 && notes[0].contains("copy or restore"), "\(notes)")
    }

    @Test("the same inode, shorter (cut in place: the repair, an edit; never a sync tool): accepted, with a note")
    func cutInPlaceAccepts() {
        let recorded = record(["2026-11.jsonl": Mark(inode: 7, size: 300)])
        let verdict = OwnFolderRecord.check(recorded, folder: Self.folder, onDisk: onDisk(["2026-11.jsonl": Mark(inode: 7, size: 200)]))
        guard case .accept(let notes) = verdict else { Issue.record("refused a file cut in place"); return }
        #expect(notes.count == 1 && notes[0].contains("cut in place"), "\(notes)")
    }

    @Test("a recorded month gone (pruned, deleted by hand): accepted")
    func recordedMonthGoneAccepts() {
        let recorded = record(["2026-10.jsonl": Mark(inode: 5, size: 100), "2026-11.jsonl": Mark(inode: 7, size: 300)])
        #expect(OwnFolderRecord.check(recorded, folder: Self.folder, onDisk: onDisk(["2026-11.jsonl": Mark(inode: 7, size: 300)])) == .accept(notes: []))
    }

    @Test("an unrecorded month of the last check's month or later, not empty (another writer went on into a new month): refused; empty (made just before a crash) or older (restored): accepted; a recorded month far ahead changes neither")
    func unrecordedMonths() {
        let recorded = record(["2026-10.jsonl": Mark(inode: 5, size: 100)])
        let later = OwnFolderRecord.check(recorded, folder: Self.folder, onDisk: onDisk([
            "2026-10.jsonl": Mark(inode: 5, size: 100), "2026-11.jsonl": Mark(inode: 8, size: 90),
        ]))
        #expect(isRefused(later))
        let empty = OwnFolderRecord.check(recorded, folder: Self.folder, onDisk: onDisk([
            "2026-10.jsonl": Mark(inode: 5, size: 100), "2026-11.jsonl": Mark(inode: 8, size: 0),
        ]))
        #expect(empty == .accept(notes: []))
        let older = OwnFolderRecord.check(recorded, folder: Self.folder, onDisk: onDisk([
            "2026-09.jsonl": Mark(inode: 4, size: 70), "2026-10.jsonl": Mark(inode: 5, size: 100),
        ]))
        #expect(!isRefused(older))
        // A record of no month yet (a daemon that never wrote): a non-empty month since the
        // check is another's; an earlier one put back (a reinstall, then a restore) is not.
        #expect(isRefused(OwnFolderRecord.check(record([:]), folder: Self.folder, onDisk: onDisk(["2026-11.jsonl": Mark(inode: 8, size: 90)]))))
        #expect(!isRefused(OwnFolderRecord.check(record([:]), folder: Self.folder, onDisk: onDisk(["2026-08.jsonl": Mark(inode: 8, size: 90)]))))
        // A month far ahead recorded (a record dated after a peer's clock) leaves a later real
        // month unrecorded: still another's.
        let ahead = record(["2026-11.jsonl": Mark(inode: 7, size: 300), "2027-03.jsonl": Mark(inode: 6, size: 80)])
        #expect(isRefused(OwnFolderRecord.check(ahead, folder: Self.folder, onDisk: onDisk([
            "2026-11.jsonl": Mark(inode: 7, size: 300), "2026-12.jsonl": Mark(inode: 8, size: 90), "2027-03.jsonl": Mark(inode: 6, size: 80),
        ]))))
    }

    @Test("a sync tool's conflict copy made since the last start is said, not refused (Syncthing makes them of a device's own file too); an older one the user kept is not said")
    func conflictCopies() {
        let checked = Self.checkedInNovember
        let recorded = record(["2026-11.jsonl": Mark(inode: 7, size: 300)], checkedMs: checked)
        let months = ["2026-11.jsonl": Mark(inode: 7, size: 300)]
        let fresh = OwnFolderRecord.check(recorded, folder: Self.folder, onDisk: onDisk(months, conflicts: [("2026-11.sync-conflict-20261126-101500-ABCDEFG.jsonl", checked + 1)]))
        guard case .accept(let notes) = fresh else { Issue.record("refused a conflict copy"); return }
        #expect(notes.count == 1 && notes[0].contains("sync-conflict") && notes[0].contains("--device-id"), "\(notes)")
        let old = OwnFolderRecord.check(recorded, folder: Self.folder, onDisk: onDisk(months, conflicts: [("2026-11.sync-conflict-20261020-101500-ABCDEFG.jsonl", checked - 1)]))
        #expect(old == .accept(notes: []))
    }

    @Test("a record of another folder (another --history-dir or --device-id) says nothing of this one: accepted")
    func otherFolderRecordAccepts() {
        let recorded = OwnFolderRecord(folder: "/elsewhere/0123456789abcdef0123456789abcdef", checkedMs: 0, months: ["2026-11.jsonl": Mark(inode: 7, size: 300)])
        let verdict = OwnFolderRecord.check(recorded, folder: Self.folder, onDisk: onDisk(["2026-11.jsonl": Mark(inode: 9, size: 999)]))
        #expect(!isRefused(verdict))
    }

    @Test("the record reads back as written; damaged bytes read as no record")
    func recordRoundTrips() {
        let recorded = record(["2026-10.jsonl": Mark(inode: .max, size: 0), "2026-11.jsonl": Mark(inode: 7, size: 300)])
        #expect(OwnFolderRecord(bytes: recorded.bytes) == recorded)
        for damaged in ["", "{", "[]", #"{"folder":"/h","checked_ms":1,"months":{"passwd":{"inode":1,"size":1}}}"#,
            #"{"folder":"/h","checked_ms":1,"months":{"2026-11.jsonl":{"inode":1,"size":-1}}}"#]
        {
            #expect(OwnFolderRecord(bytes: Array(damaged.utf8)) == nil, "\(damaged)")
        }
    }
}

/// The start-up check through `HistoryFolder.prepareAtStart`, on a temporary folder.
@Suite("own device folder check at start")
final class OwnFolderCheckTests {
    let root: String
    let state: String
    let logged = Locked<[String]>([])
    static let deviceID = "0123456789abcdef0123456789abcdef"

    init() throws {
        var template = Array("/tmp/swownfolder-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made) + "/history"
        state = String(cString: made) + "/state"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    }

    deinit {
        try? FileManager.default.removeItem(atPath: (root as NSString).deletingLastPathComponent)
    }

    func folder() -> HistoryFolder {
        let logger = Logger(minimumLevel: .info, journald: false) { [logged] line in logged.withLock { $0.append(line) } }
        let layout = HistoryLayout(deviceID: Self.deviceID, deviceName: "box", hostName: "host", trust: .currentProcess, logger: logger)
        let (path, state) = (root, state)
        let ownFolderGuard = OwnFolderGuard(stateDirectory: state, logger: logger) { try? DirectoryDescriptor.open(state) }
        return HistoryFolder(layout: layout, path: path, openRoot: { () throws(Errno) in try DirectoryDescriptor.open(path) }, ownFolderGuard: ownFolderGuard)
    }

    /// Every file under the history folder and its bytes.
    func contents() throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.subpathsOfDirectory(atPath: root) {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + name))
            }
        }
        return files
    }

    @Test("a month replaced by a longer one since the record: the start is refused, the message says --device-id and names the record to delete, and nothing in the history folder changes")
    func replacedMonthRefusedBeforeAnyChange() throws {
        let device = root + "/" + Self.deviceID
        try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try Data("one\n".utf8).write(to: URL(fileURLWithPath: device + "/2026-11.jsonl"))
        var status = stat()
        #expect(stat(device + "/2026-11.jsonl", &status) == 0)
        let recorded = OwnFolderRecord(folder: device, checkedMs: 0, months: ["2026-11.jsonl": .init(inode: UInt64(status.st_ino), size: 4)])
        try Data(recorded.bytes).write(to: URL(fileURLWithPath: state + "/" + OwnFolderRecord.fileName))
        // As a sync tool carries another writer's appends: a new file renamed over it.
        try Data("one\ntwo\n".utf8).write(to: URL(fileURLWithPath: device + "/.tmp"))
        #expect(rename(device + "/.tmp", device + "/2026-11.jsonl") == 0)
        let before = try contents()
        do {
            try folder().prepareAtStart()
            Issue.record("the start was not refused")
        } catch {
            #expect(error.description.contains("--device-id") && error.description.contains("systemd-id128 new"), "\(error)")
            #expect(error.description.contains(state + "/" + OwnFolderRecord.fileName), "\(error)")
            #expect(error.description.contains(device), "\(error)")
        }
        // Not even device.json nor the marker.
        #expect(try contents() == before)
    }

    @Test("a start whose check could not run (the history folder cannot be opened) removes the record: what it then writes unrecorded must not make the next start refuse")
    func uncheckedStartForgetsRecord() throws {
        let recordPath = state + "/" + OwnFolderRecord.fileName
        try Data(OwnFolderRecord(folder: root + "/" + Self.deviceID, checkedMs: 0, months: [:]).bytes).write(to: URL(fileURLWithPath: recordPath))
        let logger = Logger(minimumLevel: .info, journald: false) { [logged] line in logged.withLock { $0.append(line) } }
        let layout = HistoryLayout(deviceID: Self.deviceID, deviceName: "box", hostName: "host", trust: .currentProcess, logger: logger)
        let state = state
        let ownFolderGuard = OwnFolderGuard(stateDirectory: state, logger: logger) { try? DirectoryDescriptor.open(state) }
        let unopenable = HistoryFolder(layout: layout, path: root, openRoot: { () throws(Errno) in throw Errno(EIO) }, ownFolderGuard: ownFolderGuard)
        try unopenable.prepareAtStart()
        #expect(FileManager.default.fileExists(atPath: recordPath))
        ownFolderGuard.forgetIfUnchecked()
        #expect(!FileManager.default.fileExists(atPath: recordPath))
        // A checked start keeps it.
        try Data(OwnFolderRecord(folder: root + "/" + Self.deviceID, checkedMs: 0, months: [:]).bytes).write(to: URL(fileURLWithPath: recordPath))
        let checked = folder()
        try checked.prepareAtStart()
        checked.ownFolderGuard?.forgetIfUnchecked()
        #expect(FileManager.default.fileExists(atPath: recordPath))
    }

    @Test("a record that cannot be written is removed, not left behind older than what was written since (it would make the next start refuse this daemon's own months)")
    func unwritableRecordRemoved() throws {
        let recordPath = state + "/" + OwnFolderRecord.fileName
        let logger = Logger(minimumLevel: .info, journald: false) { [logged] line in logged.withLock { $0.append(line) } }
        let state = state
        let ownFolderGuard = OwnFolderGuard(stateDirectory: state, logger: logger) { try? DirectoryDescriptor.open(state) }
        let written = OwnFolderRecord(folder: root + "/" + Self.deviceID, checkedMs: 0, months: ["2026-11.jsonl": .init(inode: 7, size: 300)])
        ownFolderGuard.write(written)
        #expect(FileManager.default.fileExists(atPath: recordPath))
        // The temporary name taken by a folder with something in it: the replace fails.
        try FileManager.default.createDirectory(atPath: state + "/" + OwnFolderRecord.temporaryName + "/x", withIntermediateDirectories: true)
        var grown = written
        grown.months["2026-12.jsonl"] = .init(inode: 8, size: 90)
        ownFolderGuard.write(grown)
        #expect(!FileManager.default.fileExists(atPath: recordPath))
        #expect(logged.withLock { $0.contains { $0.contains("removed") } })
    }

    @Test("no record: accepted, and the folder prepared as before")
    func noRecordPrepares() throws {
        let device = root + "/" + Self.deviceID
        try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try Data("one\n".utf8).write(to: URL(fileURLWithPath: device + "/2026-11.jsonl"))
        let made = folder()
        try made.prepareAtStart()
        #expect(made.ownFolderGuard?.checkedFolder == device)
        #expect(FileManager.default.fileExists(atPath: root + "/stopwatchd-history.json"))
    }
}
