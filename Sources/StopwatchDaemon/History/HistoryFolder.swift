import Glibc
import LinuxSystem

/// The history folder as the journal opens it: the folder (`--history-dir`, or `history/`
/// in the state directory), made format 2 by `HistoryLayout.prepare` before anything is
/// written in it, and this device's folder in it, which the journal writes and reads.
///
/// Not thread-safe: used at start, then on the server's queue (the journal's).
// Unchecked Sendable, so that the journal's closures may hold it: `prepared` is used only at
// start (before the queue serves) and then on the serving queue, never at once.
final class HistoryFolder: @unchecked Sendable {
    let layout: HistoryLayout
    /// The folder's path, for messages.
    let path: String
    private let openRoot: () throws(Errno) -> DirectoryDescriptor
    private let openRootToRead: (() throws(Errno) -> DirectoryDescriptor)?
    /// Whether `prepare` was done (the marker is there, the old months moved).
    private var prepared = false
    /// The device folder, open for the daemon's lifetime with an exclusive `flock` on it: two
    /// daemons (other state directories, one `--history-dir`, one machine) never write the
    /// same device folder. Nil until it is taken (at start, or at the first write).
    private var deviceLock: DirectoryDescriptor?
    /// Why the folder could not be prepared at start (tried again at the first write), for
    /// the status; nil when it was.
    private(set) var startProblem: String?
    /// Months left at the top of a folder not yet marked (they differ from the device
    /// folder's: `HistoryLayout.migrate`), for the status until a restart finds them gone.
    private(set) var monthsLeftAtTop: String?
    /// Checks at start, before anything in the folder changes, that the device folder holds
    /// only what this daemon left (a cloned machine image: `OwnFolderRecord`); nil: no check.
    let ownFolderGuard: OwnFolderGuard?

    init(
        layout: HistoryLayout, path: String,
        openRoot: @escaping () throws(Errno) -> DirectoryDescriptor,
        openRootToRead: (() throws(Errno) -> DirectoryDescriptor)? = nil,
        ownFolderGuard: OwnFolderGuard? = nil
    ) {
        self.layout = layout
        self.path = path
        self.openRoot = openRoot
        self.openRootToRead = openRootToRead
        self.ownFolderGuard = ownFolderGuard
    }

    deinit {
        deviceLock?.close()
    }

    /// At start: makes the folder format 2 (`HistoryLayout.prepare`). A refusal (a folder of
    /// an unknown format, a device folder not trusted) is the daemon's to refuse to start
    /// with; a folder that cannot be opened or written now (a full disk, EIO: a refusal
    /// carrying the system's error) is logged and prepared at the first write instead, as a
    /// state directory that cannot be written does not stop the daemon (SPEC §4).
    func prepareAtStart() throws(HistoryLayout.Refusal) {
        let root: DirectoryDescriptor
        do {
            root = try openRoot()
        } catch {
            layout.logger.error("cannot open the history folder \(path): \(error); tried again at the first write")
            return
        }
        defer { root.close() }
        do throws(HistoryLayout.Refusal) {
            let device = try layout.prepare(root, path: path) { () throws(HistoryLayout.Refusal) in
                try lockedOnce(root: root)
                // Locked: no daemon of this machine changes the folder while it is looked at.
                if let ownFolderGuard, let deviceLock { try ownFolderGuard.check(deviceLock, folderPath: "\(path)/\(layout.deviceID)") }
            }
            device.close()
            prepared = true
            if (try? root.status(of: HistoryLayout.markerName)) == nil,
                let months = try? root.entries().compactMap(HistoryMonth.init(fileName:)).sorted(), !months.isEmpty
            {
                monthsLeftAtTop = "\(months.map(\.fileName).joined(separator: ", ")) left at the top of \(path), differing from the device folder's (see the log)"
            }
        } catch where error.errno != nil {
            layout.logger.error("\(error); tried again at the first write")
            startProblem = "\(error); tried again at the first write"
            // Unprepared, but the device folder still this daemon's if it can be opened: a
            // second daemon is refused all the same. (One that cannot be opened is locked at
            // the first write.)
            do throws(HistoryLayout.Refusal) {
                try lockedOnce(root: root)
            } catch where error.errno != nil {
            }
        }
    }

    /// Keeps `device` (which it closes otherwise) open and locked for the daemon's lifetime,
    /// unless it already holds the lock; refuses when another process holds it.
    private func lock(_ device: DirectoryDescriptor) throws(HistoryLayout.Refusal) {
        guard deviceLock == nil else {
            device.close()
            return
        }
        let locked: Bool
        do throws(Errno) {
            locked = try device.descriptor.tryLockExclusively()
        } catch {
            device.close()
            throw HistoryLayout.Refusal(description: "cannot lock the device folder \(path)/\(layout.deviceID): \(error)", errno: error)
        }
        guard locked else {
            device.close()
            throw HistoryLayout.Refusal(
                description: "another stopwatchd writes the device folder \(path)/\(layout.deviceID) (it holds its lock): give each daemon sharing --history-dir its own --device-id, or stop the other"
            )
        }
        deviceLock = device
    }

    /// The device folder's lock taken (`lock`, on a descriptor of its own) if not yet.
    private func lockedOnce(root: DirectoryDescriptor) throws(HistoryLayout.Refusal) {
        guard deviceLock == nil else { return }
        try lock(try layout.deviceFolder(in: root, path: path))
    }

    /// This device's folder, to write: the folder prepared first if it was not.
    func openDeviceFolder() throws(Errno) -> DirectoryDescriptor {
        let root = try openRoot()
        defer { root.close() }
        do throws(HistoryLayout.Refusal) {
            let device: DirectoryDescriptor
            if prepared {
                device = try layout.deviceFolder(in: root, path: path)
                do throws(HistoryLayout.Refusal) {
                    try lockedOnce(root: root)
                } catch {
                    device.close()
                    throw error
                }
            } else {
                device = try layout.prepare(root, path: path) { () throws(HistoryLayout.Refusal) in try lockedOnce(root: root) }
                prepared = true
            }
            return device
        } catch {
            if let errno = error.errno { throw errno }
            layout.logger.error("\(error)")
            throw Errno(EPERM)
        }
    }

    /// This device's folder, only to read (`HistoryJournal`'s `openDirectoryToRead`), while
    /// the folder cannot be written (so not prepared); ENOENT when there is none. A folder
    /// not yet in format 2 (no marker, no device folder) is read as it is: its months are at
    /// its top.
    /// The history folder itself, to read the other devices' folders in it (`PeerDevices`).
    func openFolderToRead() throws(Errno) -> DirectoryDescriptor {
        try (openRootToRead ?? openRoot)()
    }

    func openDeviceFolderToRead() throws(Errno) -> DirectoryDescriptor {
        let root = try (openRootToRead ?? openRoot)()
        do throws(HistoryLayout.Refusal) {
            let device = try layout.deviceFolder(in: root, path: path, creating: false)
            root.close()
            return device
        } catch where error.errno == .noEntry {
            if try root.status(of: HistoryLayout.markerName) == nil { return root }
            root.close()
            throw Errno.noEntry
        } catch {
            root.close()
            throw error.errno ?? Errno(EPERM)
        }
    }
}
