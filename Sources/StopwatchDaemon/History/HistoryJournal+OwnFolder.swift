import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// The guard against another writer with this device id (a cloned machine image): what this
/// daemon leaves in its folder is recorded (`OwnFolderRecord`, in the state directory) at
/// start, when it makes a month file and at a clean stop, never per append (a Stop gains no
/// second flush); a month file that is not as this daemon left it stops all writing to the
/// folder until a restart, whose check then refuses to start.
extension HistoryJournal {
    /// After the start-up check accepted the folder and the repair: what is there now is
    /// this daemon's, recorded.
    func recordOwnFolder() {
        guard let ownFolderGuard, let folder = ownFolderGuard.checkedFolder,
            let directory = try? directoryDescriptor(), let onDisk = try? OwnFolderRecord.scan(directory)
        else { return }
        let record = OwnFolderRecord(folder: folder, checkedMs: wallClock.nowMilliseconds(), months: onDisk.months)
        ownRecord = record
        ownFolderGuard.write(record)
    }

    /// Written at a clean stop: the sizes appends reached.
    func saveOwnRecord() {
        guard let ownRecord else { return }
        ownFolderGuard?.write(ownRecord)
    }

    /// A month file this daemon made (or opened, judged its own): recorded, and written at
    /// once when it was not recorded (once a month: the making costs a flush already).
    func noteOwnMonth(_ month: HistoryMonth, _ mark: OwnFolderRecord.Mark) {
        guard ownRecord != nil else { return }
        let isNew = ownRecord?.months[month.fileName]?.inode != mark.inode
        ownRecord?.months[month.fileName] = mark
        if isNew { saveOwnRecord() }
    }

    /// A month file this daemon did not make now, about to be opened to append to (`status`
    /// is its): recorded when it is as this daemon left it (`OwnFolderRecord.foreignChange`);
    /// else EPERM, and no file of this folder is written again until a restart.
    func judgeOwnMonth(_ month: HistoryMonth, _ status: FileStatus) throws(Errno) {
        let found = OwnFolderRecord.Mark(inode: status.inode, size: status.size)
        guard let ownRecord else { return }
        let name = month.fileName
        if let reason = OwnFolderRecord.foreignChange(name, recorded: ownRecord.months[name], found: found, isNewest: ownRecord.isSinceCheck(name)) {
            noteForeignWriter(reason)
            throw Errno(EPERM)
        }
        noteOwnMonth(month, found)
    }

    /// The month file kept open was replaced (`found` is at its name now).
    func foundForeignWriter(_ month: HistoryMonth, keptInode: UInt64, found: FileStatus) -> Errno {
        noteForeignWriter("\(month.fileName) was replaced while this daemon wrote it (inode \(keptInode), now \(found.inode) of \(found.size) bytes)")
        return Errno(EPERM)
    }

    private func noteForeignWriter(_ reason: String) {
        closeCurrent()
        guard foreignWriter == nil else { return }
        let found = "another stopwatchd with this device id writes the device folder \(ownFolderGuard?.checkedFolder ?? deviceID) (\(reason)): a cloned machine image? Nothing is written to it until a restart; give this machine its own --device-id (make one with systemd-id128 new)"
        foreignWriter = found
        logger.error("history: \(found)")
        problemChanged(problem)
    }

    /// Before a change that ends a counting interval (Stop, Remove…) at `endMs`: refused, with
    /// nothing changed, when the interval could not be written to this daemon's own file.
    /// Costs one `stat` of the month file it would go to: the file kept open must still be
    /// at its name; another must be as this daemon left it.
    func ensureWritable(endingAt endMs: Int64) throws(VarlinkError) {
        // The folder's descriptor opened again when a failed write dropped it: the check must
        // not lapse while writes are retried.
        if foreignWriter == nil, ownFolderGuard != nil, let directory = try? directoryDescriptor() {
            let month = HistoryMonth(epochMilliseconds: endMs)
            // Nil (deleted, or a new month): made at the write. Not a file, or an error: the
            // write's to meet.
            if let found = try? directory.status(of: month.fileName), found.kind == .regular {
                if let current, current.month == month {
                    if found.inode != current.inode { _ = foundForeignWriter(month, keptInode: current.inode, found: found) }
                } else if let ownRecord {
                    let name = month.fileName
                    let mark = OwnFolderRecord.Mark(inode: found.inode, size: found.size)
                    if let reason = OwnFolderRecord.foreignChange(name, recorded: ownRecord.months[name], found: mark, isNewest: ownRecord.isSinceCheck(name)) {
                        noteForeignWriter(reason)
                    }
                }
            }
        }
        guard let foreignWriter else { return }
        throw .protocolError("the history cannot be written (\(foreignWriter)); nothing was changed")
    }
}
