import Dispatch
import Glibc
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
import Varlink

/// Keeps the stopwatches in a directory, one file each (`<name>.json`, a `StopwatchRecord`),
/// so that a change writes one small file and a damaged file costs one stopwatch.
///
/// Every write is atomic and durable before `save` returns. A write that fails does not
/// stop anything: it is logged once per episode, reported in `problem`, and retried (on the
/// next change, and every `retryInterval`) until writing works again.
///
/// Not thread-safe: it belongs to the server's queue.
// Sendable without checks, so the stop handler can take it along: every stored property is
// read and written only on `queue` (serial), where that handler and every caller run.
final class StateStore: @unchecked Sendable {
    /// The state directory (`--state-dir`), which holds the lock and `stopwatches/`.
    let stateDirectory: String
    /// Where the stopwatch files are: `stopwatches/` in the state directory.
    let directory: String
    /// The largest state file read; anything longer is bad content.
    let maximumFileSize: Int
    private let logger: Logger
    private let clocks: () -> ClockReading
    private let queue: DispatchQueue
    private let retryInterval: Duration
    private let trust: DirectoryTrust
    /// What to write for a name whose last write failed, when trying again.
    var currentSnapshot: (String) -> StopWatchSnapshot? = { _ in nil }

    /// Why writing fails now; nil while it works.
    private(set) var problem: String? {
        didSet { if (problem == nil) != (oldValue == nil) { onProblemChanged() } }
    }
    /// Called when writing starts failing, and when it works again.
    var onProblemChanged: () -> Void = {}
    private var unsaved: Set<String> = []
    /// The error of the last write that failed, for the log.
    private var lastWriteError: Errno?
    private var retryTimer: (any DispatchSourceTimer)?

    /// Opened once and kept: every file is reached through these, never by path.
    private var stateDescriptor: DirectoryDescriptor?
    private var lock: FileDescriptor?
    private var stopwatchesDescriptor: DirectoryDescriptor?

    static let lockName = "stopwatchd.lock"
    static let subdirectoryName = "stopwatches"

    /// The largest file the writer can produce with `maximumLaps` laps, each up to the widest
    /// Int64 (`-9223372036854775808`, 20 characters, and its comma), plus 4 KiB for the rest
    /// (a 64-scalar name escaped to at most 12 bytes each is 768, the other fields under 300).
    /// Never below the 1 MiB every earlier stopwatchd read, so no file that loaded before
    /// is refused now.
    static func maximumFileSize(maximumLaps: Int) -> Int {
        let perLap = "-9223372036854775808,".utf8.count
        let (laps, overflow) = max(maximumLaps, 0).multipliedReportingOverflow(by: perLap)
        return overflow ? Int.max : max(1 << 20, 4096 + laps)
    }

    init(
        directory stateDirectory: String,
        maximumLaps: Int,
        logger: Logger,
        queue: DispatchQueue,
        retryInterval: Duration = .seconds(5),
        trust: DirectoryTrust = .currentProcess,
        clocks: @escaping () -> ClockReading = ClockReading.now
    ) {
        self.stateDirectory = stateDirectory
        self.directory = stateDirectory + "/" + Self.subdirectoryName
        self.maximumFileSize = Self.maximumFileSize(maximumLaps: maximumLaps)
        self.logger = logger
        self.queue = queue
        self.retryInterval = retryInterval
        self.trust = trust
        self.clocks = clocks
    }

    private static func fileName(of name: String) -> String { "\(name).json" }
    private static func temporaryName(of name: String) -> String { ".\(name).json.tmp" }
    private func path(of name: String) -> String { "\(directory)/\(Self.fileName(of: name))" }

    /// Why opening the directories failed.
    private enum OpenFailure: Error {
        /// Not to be used at all (not trusted, or another daemon's): the daemon must not start.
        case refused(String)
        /// Cannot be made or opened now (permissions, read-only, a file in the way): the
        /// daemon starts and keeps trying, as for any write that fails.
        case unavailable(String, Errno)
    }

    /// Opens the state directory (making it 0700 if missing), checks it, takes its lock,
    /// then opens `stopwatches/` the same way. What is already open stays.
    private func openDirectories() throws(OpenFailure) -> DirectoryDescriptor {
        if let stopwatchesDescriptor { return stopwatchesDescriptor }
        let state: DirectoryDescriptor
        if let stateDescriptor {
            state = stateDescriptor
        } else {
            state = try openTrusted { () throws(Errno) in
                do throws(Errno) {
                    return try DirectoryDescriptor.open(stateDirectory, creatingWith: 0o700)
                } catch where error == .tooManyLinks {
                    // systemd's DynamicUser= makes /var/lib/NAME a link to /var/lib/private/NAME:
                    // a link its owner (root, or this user) made is followed once, here; what it
                    // leads to is opened without following anything further, and checked.
                    let link = try FileSystem.ownerAndMode(at: stateDirectory)
                    guard link.uid == trust.userID || link.uid == 0 else { throw error }
                    return try DirectoryDescriptor.open(try FileSystem.resolvedPath(stateDirectory))
                }
            }
            stateDescriptor = state
        }
        if lock == nil {
            do {
                switch try LockFile.take(Self.lockName, in: state) {
                case .locked(let file): lock = file
                case .held:
                    throw OpenFailure.refused("another stopwatchd uses the state directory \(stateDirectory); stop it first, or give this one another --state-dir")
                }
            } catch let failure as OpenFailure {
                throw failure
            } catch {
                let errno = error as? Errno ?? Errno(EIO)
                throw .unavailable("cannot lock \(stateDirectory)/\(Self.lockName): \(errno)", errno)
            }
        }
        let stopwatches = try openTrusted(Self.subdirectoryName) { () throws(Errno) in
            try state.openDirectory(Self.subdirectoryName, creatingWith: 0o700)
        }
        stopwatchesDescriptor = stopwatches
        return stopwatches
    }

    private func openTrusted(
        _ name: String? = nil,
        _ open: () throws(Errno) -> DirectoryDescriptor
    ) throws(OpenFailure) -> DirectoryDescriptor {
        let path = name.map { "\(stateDirectory)/\($0)" } ?? stateDirectory
        let opened: DirectoryDescriptor
        do {
            opened = try open()
        } catch where error == .tooManyLinks {
            throw .refused("\(path) is a symbolic link the daemon does not follow (only the state directory itself may be one, owned by this user or root); give the directory it points to")
        } catch {
            throw .unavailable("cannot open the state directory \(path): \(error)", error)
        }
        do {
            if let problem = trust.problem(with: try opened.status(), path: path) {
                opened.close()
                throw OpenFailure.refused("refusing the state directory: \(problem)")
            }
        } catch let failure as OpenFailure {
            throw failure
        } catch {
            opened.close()
            let errno = error as? Errno ?? Errno(EIO)
            throw .unavailable("cannot inspect the state directory \(path): \(errno)", errno)
        }
        return opened
    }

    /// Reads every stopwatch kept. Leftovers of a crash mid-write (temporary files) are
    /// removed, once this daemon holds the directory's lock. A file whose content is bad
    /// (not JSON, a wrong format, out of range, not a regular file) is moved aside and logged.
    ///
    /// Throws — the daemon must not start — for a directory it must not trust, one another
    /// daemon uses, and a file it cannot read (EACCES, EIO: not bad content, so not moved).
    /// A directory that cannot be made or opened is logged, and reported in `problem`.
    func load() throws(DaemonStartError) -> [(name: String, snapshot: StopWatchSnapshot)] {
        let stopwatches: DirectoryDescriptor
        var isLocked = true
        do {
            stopwatches = try openDirectories()
        } catch {
            switch error {
            case .refused(let message): throw DaemonStartError(message)
            case .unavailable(let message, let errno):
                lastWriteError = errno
                failed(message)
                // Not writable now (a read-only file system, say), perhaps not even lockable:
                // still read what is there, so that once writing works a change is written
                // to the stopwatch as it was, never to a new one in its place. Nothing is
                // written before the lock is taken.
                guard let state = stateDescriptor else { return [] }
                do {
                    stopwatches = try openTrusted(Self.subdirectoryName) { () throws(Errno) in
                        try state.openDirectory(Self.subdirectoryName)
                    }
                } catch {
                    if case .refused(let message) = error { throw DaemonStartError(message) }
                    return []
                }
                isLocked = false
            }
        }
        defer { if !isLocked { stopwatches.close() } }
        let names: [String]
        do {
            names = try stopwatches.entries()
        } catch {
            throw DaemonStartError("cannot read the state directory \(directory): \(error); fix its permissions so this user can read it")
        }
        let now = clocks()
        var restored: [(name: String, snapshot: StopWatchSnapshot)] = []
        for file in names.sorted() {
            if file.hasPrefix("."), file.hasSuffix(".tmp") {
                // A write that never reached its rename: the file it was replacing is intact.
                if isLocked { try? stopwatches.remove(file) }
                continue
            }
            guard file.hasSuffix(".json"), StopwatchName.isValid(String(file.dropLast(5))) else { continue }
            let name = String(file.dropLast(5))
            switch try read(file, in: stopwatches, at: now) {
            case .success(let snapshot): restored.append((name, snapshot))
            case .failure(let badContent): moveAside(name, because: badContent.reason, in: stopwatches, at: now)
            }
        }
        return restored
    }

    private struct BadContent: Error {
        let reason: String
    }

    /// The stopwatch in `file`, or why its content is bad; throws when it cannot be read.
    private func read(
        _ file: String,
        in stopwatches: DirectoryDescriptor,
        at now: ClockReading
    ) throws(DaemonStartError) -> Result<StopWatchSnapshot, BadContent> {
        func unreadable(_ error: Errno) -> DaemonStartError {
            DaemonStartError("cannot read the stopwatch file \(directory)/\(file): \(error); it is left as it is: fix its permissions (or move it away) and start again")
        }
        let descriptor: FileDescriptor
        do {
            // Only what is a regular file now is opened (opening a device can do things),
            // and the open itself neither follows a link nor waits for a FIFO's writer.
            guard let status = try stopwatches.status(of: file) else { return .failure(BadContent(reason: "it vanished")) }
            guard status.kind == .regular else { return .failure(BadContent(reason: "it is a \(status.kind), not a regular file")) }
            descriptor = try stopwatches.openFile(file, [.readOnly, .noFollow, .nonBlocking])
        } catch where error == .tooManyLinks || error == .noDeviceOrAddress {
            return .failure(BadContent(reason: "it is not a regular file"))
        } catch {
            throw unreadable(error)
        }
        defer { descriptor.close() }
        let bytes: [UInt8]
        do {
            let status = try descriptor.status()
            guard status.kind == .regular else { return .failure(BadContent(reason: "it is a \(status.kind), not a regular file")) }
            guard status.size <= maximumFileSize else {
                return .failure(BadContent(reason: "it is \(status.size) bytes, more than the \(maximumFileSize) a stopwatch takes"))
            }
            bytes = try descriptor.readAll(limit: maximumFileSize)
        } catch where error == .fileTooLarge {
            return .failure(BadContent(reason: "it is more than the \(maximumFileSize) bytes a stopwatch takes"))
        } catch {
            throw unreadable(error)
        }
        do {
            let record = try StopwatchRecord(json: try JSONParser.parse(bytes))
            guard Self.fileName(of: record.name) == file else { throw MalformedMessage("it holds stopwatch '\(record.name)'") }
            try record.checkRange(at: now)
            return .success(record.snapshot(restoredAt: now))
        } catch {
            return .failure(BadContent(reason: "\(error)"))
        }
    }

    /// Makes `name`'s state durable; nil removes it. Returns once it is on disk, or once the
    /// failure is logged (the change itself stands).
    func save(_ name: String, _ snapshot: StopWatchSnapshot?) {
        if write(name, snapshot) {
            if problem != nil { retryUnsaved() }
        } else {
            unsaved.insert(name)
        }
    }

    private func write(_ name: String, _ snapshot: StopWatchSnapshot?) -> Bool {
        do throws(Errno) {
            do {
                try writeOnce(name, snapshot)
            } catch where error == .noEntry {
                // `stopwatches/` went away (or was never made): make it again and retry.
                stopwatchesDescriptor?.close()
                stopwatchesDescriptor = nil
                try writeOnce(name, snapshot)
            }
            return true
        } catch {
            lastWriteError = error
            failed("cannot save stopwatches in \(directory): \(error); they keep running and are saved once it is writable")
            return false
        }
    }

    private func writeOnce(_ name: String, _ snapshot: StopWatchSnapshot?) throws(Errno) {
        let stopwatches: DirectoryDescriptor
        do {
            stopwatches = try openDirectories()
        } catch {
            switch error {
            case .refused(let message):
                if problem == nil { logger.error(message) }
                throw Errno(EPERM)
            case .unavailable(_, let errno): throw errno
            }
        }
        if let snapshot {
            let record = StopwatchRecord(name: name, snapshot: snapshot, at: clocks())
            try writeAtomically(record.json.serialized, to: Self.fileName(of: name), temporaryName: Self.temporaryName(of: name), in: stopwatches)
        } else {
            try stopwatches.remove(Self.fileName(of: name))
            try stopwatches.sync()
        }
    }

    /// Replaces `name` with `bytes` so that a crash at any moment leaves either the old file
    /// or the new one, whole: writes the temporary file (created exclusively, never through
    /// a link), flushes it, renames it over `name`, and flushes the directory so the rename
    /// itself is durable.
    private func writeAtomically(_ bytes: [UInt8], to name: String, temporaryName: String, in directory: DirectoryDescriptor) throws(Errno) {
        let flags: OpenFlags = [.writeOnly, .create, .exclusive, .noFollow]
        let file: FileDescriptor
        do {
            file = try directory.openFile(temporaryName, flags, mode: 0o600)
        } catch where error == .exists {
            // A leftover, or something planted: removed (a link itself, not its target).
            try directory.remove(temporaryName)
            file = try directory.openFile(temporaryName, flags, mode: 0o600)
        }
        do throws(Errno) {
            try file.writeAll(bytes)
            try file.sync()
        } catch {
            file.close()
            try? directory.remove(temporaryName)
            throw error
        }
        file.close()
        do throws(Errno) {
            try directory.rename(temporaryName, to: name)
        } catch {
            try? directory.remove(temporaryName)
            throw error
        }
        try directory.sync()
    }

    /// One last try before the daemon exits, for changes still waiting for the directory to
    /// become writable; what still cannot be written is named in the log, since it is lost.
    func saveBeforeExit() {
        guard !unsaved.isEmpty else { return }
        retryUnsaved()
        if !unsaved.isEmpty {
            let reason = lastWriteError.map { "\($0)" } ?? "unknown error"
            logger.error("stopping with unsaved changes to \(unsaved.sorted().joined(separator: ", ")) in \(directory) (\(reason)); they are lost")
        }
    }

    private func retryUnsaved() {
        for name in unsaved.sorted() {
            guard write(name, currentSnapshot(name)) else { return }
            unsaved.remove(name)
        }
        if let problem {
            logger.notice("the state directory \(directory) is writable again (it failed with: \(problem))")
        }
        problem = nil
        retryTimer?.cancel()
        retryTimer = nil
    }

    /// Logs a failure once per episode, and keeps retrying while it lasts.
    private func failed(_ reason: String) {
        if problem == nil { logger.error(reason) }
        problem = reason
        guard retryTimer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = DispatchTimeInterval.nanoseconds(Int(retryInterval.nanoseconds))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .seconds(1))
        timer.setEventHandler { [weak self] in
            guard let self, !self.unsaved.isEmpty else { return }
            self.retryUnsaved()
        }
        retryTimer = timer
        timer.activate()
    }

    private func moveAside(_ name: String, because reason: String, in stopwatches: DirectoryDescriptor, at now: ClockReading) {
        let file = Self.fileName(of: name)
        let stamp = FileSystem.timestamp(wall: now.wall)
        // Never over an earlier one moved aside in the same second.
        var aside = "\(file).corrupt-\(stamp)"
        var number = 1
        while (try? stopwatches.status(of: aside)) != nil, number < 100 {
            number += 1
            aside = "\(file).corrupt-\(stamp)-\(number)"
        }
        do {
            try stopwatches.rename(file, to: aside)
            logger.error("stopwatch file \(path(of: name)) is unreadable (\(reason)); moved it to \(directory)/\(aside) and started without it")
        } catch {
            logger.error("stopwatch file \(path(of: name)) is unreadable (\(reason)) and could not be moved aside (\(error)); ignoring it")
        }
    }

    deinit {
        retryTimer?.cancel()
        stopwatchesDescriptor?.close()
        stateDescriptor?.close()
        // Released at once, even while a child being spawned elsewhere in this process still
        // shares the descriptor (close-on-exec closes it only at its exec).
        lock?.unlock()
        lock?.close()
    }
}
