import Glibc
import LinuxSystem
import Varlink

/// What this daemon last left in its own device folder: per month file, its inode and size.
/// Kept in the state directory (`history-own.json`), never in the synced history folder, so
/// that a second machine with the same device id (a cloned machine image) cannot carry it
/// over: each machine keeps its own, and the start-up check (`check`) compares it with the
/// folder. Syncthing carries another writer's appends by replacing the month file (a new
/// inode, another size); this daemon's own appends keep the inode and only grow the file.
///
/// A value: `OwnFolderGuard` reads and writes it, the journal keeps it up to date.
struct OwnFolderRecord: Equatable, Sendable {
    static let fileName = "history-own.json"
    static let temporaryName = ".history-own.json.tmp"

    /// Which file a month is, and how long this daemon left it.
    struct Mark: Equatable, Sendable {
        var inode: UInt64
        var size: Int64
    }

    /// The device folder it describes (`PATH/DEVICE-ID`): a record of another folder (another
    /// `--history-dir`, another `--device-id`) says nothing of this one.
    var folder: String
    /// When the start-up check last accepted the folder: a sync tool's conflict copy made
    /// before then is one the user has seen (and kept).
    var checkedMs: Int64
    /// By month file name (`YYYY-MM.jsonl`).
    var months: [String: Mark]

    /// What the device folder holds now, as the check needs it.
    struct OnDisk: Equatable, Sendable {
        /// Its month files (regular ones; the repair deals with the rest), by name.
        var months: [String: Mark]
        /// Its `*.sync-conflict-*` files (Syncthing's conflict copies), with their inode
        /// change time (ms): when they were made or renamed here.
        var conflictCopies: [(name: String, changedMs: Int64)]

        static func == (lhs: OnDisk, rhs: OnDisk) -> Bool {
            lhs.months == rhs.months && lhs.conflictCopies.elementsEqual(rhs.conflictCopies) { $0 == $1 }
        }
    }

    enum Verdict: Equatable, Sendable {
        /// This daemon's folder as it left it, or with changes it explains (`notes`, logged).
        case accept(notes: [String])
        /// Another writer with this device id: each reason names a file and what changed.
        case refuse(reasons: [String])
    }

    /// Whether month file `name` is of the month of the last check or later: one this
    /// daemon would have recorded when it made it. An earlier one not recorded is put back
    /// (a restore); the months recorded do not decide it, since a month far ahead (a record
    /// dated after a peer's clock) would make every real one look old.
    func isSinceCheck(_ name: String) -> Bool {
        name >= HistoryMonth(epochMilliseconds: checkedMs).fileName
    }

    /// Whether `found` is the month this daemon left as `recorded` (nil: not recorded), for a
    /// month not recorded: whether it is of the last check's month or later (`isNewest`). Nil when
    /// it is (or may well be: a copy, a file cut in place, one just made); else why not.
    static func foreignChange(_ name: String, recorded: Mark?, found: Mark, isNewest: Bool) -> String? {
        guard let recorded else {
            // Made by this daemon, its record not yet written (a crash just after the making):
            // still empty. An older month: put back from a backup.
            guard found.size > 0, isNewest else { return nil }
            return "\(name) (\(found.size) bytes) appeared without this daemon making it"
        }
        // Appended to since the record (a crash before the next one), or cut in place (the
        // repair, an edit): a sync tool never writes in place.
        if found.inode == recorded.inode { return nil }
        // A copy or a restore (cp -a, a backup): the same bytes, another inode.
        if found.size == recorded.size { return nil }
        return "\(name) was replaced by a file of \(found.size) bytes (this daemon left it at \(recorded.size) bytes, inode \(recorded.inode); now inode \(found.inode))"
    }

    /// The start-up check: `record` (nil: none, or one of another folder) against what
    /// `folder` holds. Changes nothing: the caller records what it accepts.
    static func check(_ record: OwnFolderRecord?, folder: String, onDisk: OnDisk) -> Verdict {
        guard let record else { return .accept(notes: []) }
        guard record.folder == folder else {
            return .accept(notes: ["the record of what this daemon wrote is of \(record.folder) (another --history-dir or --device-id): recorded again"])
        }
        var reasons: [String] = []
        var notes: [String] = []
        for (name, found) in onDisk.months.sorted(by: { $0.key < $1.key }) {
            let recorded = record.months[name]
            if let reason = foreignChange(name, recorded: recorded, found: found, isNewest: record.isSinceCheck(name)) {
                reasons.append(reason)
            } else if let recorded, recorded.inode != found.inode {
                notes.append("\(name) is another file of the same size (inode \(recorded.inode), now \(found.inode)): taken as a copy or restore")
            } else if let recorded, found.size < recorded.size {
                notes.append("\(name) was cut in place to \(found.size) bytes (this daemon left \(recorded.size))")
            } else if recorded == nil, found.size > 0 {
                notes.append("\(name) was not recorded (restored?): recorded now")
            }
        }
        // A conflict copy is no proof of a second writer: Syncthing makes one of this device's
        // own file too when its database is reset or the folder shared again while the copies
        // differed. Said, not refused: a second writer also replaces the months, above.
        for copy in onDisk.conflictCopies.sorted(by: { $0.name < $1.name }) where copy.changedMs > record.checkedMs {
            notes.append("\(copy.name) is a sync tool's conflict copy made since this daemon last started (\(UTCTime.text(copy.changedMs))): if another machine has this device id, give one of them its own --device-id")
        }
        return reasons.isEmpty ? .accept(notes: notes) : .refuse(reasons: reasons)
    }

    /// What `folder` (this device's, open) holds: month files and conflict copies. Follows no
    /// link, opens nothing.
    static func scan(_ folder: DirectoryDescriptor) throws(Errno) -> OnDisk {
        var onDisk = OnDisk(months: [:], conflictCopies: [])
        for name in try folder.entries() {
            let isMonth = HistoryMonth(fileName: name) != nil
            let isConflictCopy = name.contains(".sync-conflict-")
            guard isMonth || isConflictCopy, let status = try folder.status(of: name) else { continue }
            if isMonth, status.kind == .regular {
                onDisk.months[name] = Mark(inode: status.inode, size: status.size)
            } else if isConflictCopy {
                onDisk.conflictCopies.append((name, status.changeTime / 1_000_000))
            }
        }
        return onDisk
    }

    // MARK: The file

    /// `{"folder":…,"checked_ms":…,"months":{"YYYY-MM.jsonl":{"inode":…,"size":…},…}}`.
    var bytes: [UInt8] {
        var months = JSONObject()
        for (name, mark) in self.months.sorted(by: { $0.key < $1.key }) {
            months[name] = .object(["inode": .int(Int64(bitPattern: mark.inode)), "size": .int(mark.size)])
        }
        let object: JSONObject = ["folder": .string(folder), "checked_ms": .int(checkedMs), "months": .object(months)]
        var bytes: [UInt8] = []
        JSONValue.object(object).write(into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Nil for anything but a record as `bytes` writes it.
    init?(bytes: [UInt8]) {
        guard let json = try? JSONParser.parse(bytes), case .object(let object) = json,
            case .string(let folder)? = object["folder"], case .int(let checkedMs)? = object["checked_ms"],
            case .object(let months)? = object["months"]
        else { return nil }
        var marks: [String: Mark] = [:]
        for member in months.members {
            guard HistoryMonth(fileName: member.key) != nil, case .object(let mark) = member.value,
                case .int(let inode)? = mark["inode"], case .int(let size)? = mark["size"], size >= 0
            else { return nil }
            marks[member.key] = Mark(inode: UInt64(bitPattern: inode), size: size)
        }
        self.init(folder: folder, checkedMs: checkedMs, months: marks)
    }

    init(folder: String, checkedMs: Int64, months: [String: Mark]) {
        self.folder = folder
        self.checkedMs = checkedMs
        self.months = months
    }
}

/// Reads and writes `OwnFolderRecord` in the state directory, and runs the start-up check.
///
/// Not thread-safe: used at start, then on the server's queue (the journal's).
// Unchecked Sendable, so that the journal's closures may hold it: `checked` is set at start
// (before the queue serves) and then used on the serving queue, never at once.
final class OwnFolderGuard: @unchecked Sendable {
    /// The state directory, open (nil: it cannot be opened now; nothing is read or written).
    private let openStateDirectory: () -> DirectoryDescriptor?
    /// `STATE/history-own.json`, for messages.
    let recordPath: String
    private let logger: Logger
    /// The device folder's path, once the start-up check ran and accepted it: the journal
    /// records the folder only then.
    private(set) var checkedFolder: String?

    init(stateDirectory: String, logger: Logger, openStateDirectory: @escaping () -> DirectoryDescriptor?) {
        self.openStateDirectory = openStateDirectory
        recordPath = stateDirectory + "/" + OwnFolderRecord.fileName
        self.logger = logger
    }

    /// The start-up check of this device's folder (`folderPath`, open as `device`), before
    /// anything in the history folder is changed. Throws the refusal to start.
    func check(_ device: DirectoryDescriptor, folderPath: String) throws(HistoryLayout.Refusal) {
        let record = read()
        let onDisk: OwnFolderRecord.OnDisk
        do throws(Errno) {
            onDisk = try OwnFolderRecord.scan(device)
        } catch {
            // Checked at the next start; a folder that cannot be listed is not written either.
            logger.error("cannot list the device folder \(folderPath) to check it is this daemon's alone: \(error)")
            return
        }
        switch OwnFolderRecord.check(record, folder: folderPath, onDisk: onDisk) {
        case .accept(let notes):
            for note in notes { logger.notice("the device folder \(folderPath): \(note)") }
            checkedFolder = folderPath
        case .refuse(let reasons):
            throw HistoryLayout.Refusal(
                description: "the device folder \(folderPath) was written by another stopwatchd with this device id, not by this one: "
                    + reasons.joined(separator: "; ")
                    + ". Two machines share the id (a cloned machine image?): give this machine its own with --device-id (make one with systemd-id128 new) and start again; nothing in the folder was changed. If you copied or restored the folder on purpose, delete \(recordPath) and start again"
            )
        }
    }

    /// After a start whose check could not run (the history folder could not be opened or
    /// listed): the record is removed, since what this run writes is not recorded, and a
    /// record left behind would make the next start refuse this daemon's own months. The
    /// next start takes the folder as it is.
    func forgetIfUnchecked() {
        guard checkedFolder == nil, let state = openStateDirectory() else { return }
        defer { state.close() }
        do throws(Errno) {
            try state.remove(OwnFolderRecord.fileName)
            try state.sync()
            logger.info("the device folder could not be checked at start: \(recordPath) removed, written again at the next start")
        } catch where error == .noEntry {
        } catch {
            logger.error("cannot remove \(recordPath) (\(error)): the next start may refuse this daemon's own months; delete it by hand then")
        }
    }

    /// The record in the state directory; nil when there is none, or one that cannot be read
    /// (logged: it is written again).
    private func read() -> OwnFolderRecord? {
        guard let state = openStateDirectory() else { return nil }
        defer { state.close() }
        let bytes: [UInt8]
        do throws(Errno) {
            let file = try state.openFile(OwnFolderRecord.fileName, [.readOnly, .noFollow, .nonBlocking])
            defer { file.close() }
            guard try file.status().kind == .regular else { throw Errno(EINVAL) }
            bytes = try file.readAll(limit: 1 << 20)
        } catch where error == .noEntry {
            return nil
        } catch {
            logger.warning("cannot read \(recordPath) (\(error)): the device folder is taken as it is, and recorded again")
            return nil
        }
        guard let record = OwnFolderRecord(bytes: bytes) else {
            logger.warning("\(recordPath) is damaged: the device folder is taken as it is, and recorded again")
            return nil
        }
        return record
    }

    /// Replaces the record (atomically). When that fails (a full or read-only state
    /// directory), the record is removed instead (an unlink works on a full disk): a record
    /// older than what this daemon wrote since would make the next start refuse its own
    /// months, and no record makes it take the folder as it is (logged: the guard is off
    /// until a record is written again).
    func write(_ record: OwnFolderRecord) {
        guard let state = openStateDirectory() else {
            forget(because: "the state directory cannot be opened")
            return
        }
        defer { state.close() }
        do throws(Errno) {
            try state.replaceAtomically(OwnFolderRecord.fileName, with: record.bytes, through: OwnFolderRecord.temporaryName)
        } catch {
            forget(because: "cannot write it: \(error)", in: state)
        }
    }

    private func forget(because reason: String, in given: DirectoryDescriptor? = nil) {
        guard let state = given ?? openStateDirectory() else {
            logger.error("cannot write or remove \(recordPath) (\(reason)): the next start may refuse this daemon's own months; delete it by hand then")
            return
        }
        defer { if given == nil { state.close() } }
        do throws(Errno) {
            try state.remove(OwnFolderRecord.fileName)
            try state.sync()
            logger.error("\(recordPath) removed (\(reason)): the next start takes the device folder as it is, so a second machine with this device id goes unseen until it is written again")
        } catch where error == .noEntry {
        } catch {
            logger.error("cannot write or remove \(recordPath) (\(reason); \(error)): the next start may refuse this daemon's own months; delete it by hand then")
        }
    }
}
