import Dispatch
import Glibc

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
    let directory: String
    private let logger: Logger
    private let clocks: () -> ClockReading
    private let queue: DispatchQueue
    private let retryInterval: Duration
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

    static let maximumFileSize = 1 << 20

    init(
        directory: String,
        logger: Logger,
        queue: DispatchQueue,
        retryInterval: Duration = .seconds(5),
        clocks: @escaping () -> ClockReading = ClockReading.now
    ) {
        self.directory = directory
        self.logger = logger
        self.queue = queue
        self.retryInterval = retryInterval
        self.clocks = clocks
    }

    private func path(of name: String) -> String { "\(directory)/\(name).json" }
    private func temporaryPath(of name: String) -> String { "\(directory)/.\(name).json.tmp" }

    /// Reads every stopwatch kept. Leftovers of a crash mid-write (temporary files) are
    /// removed; a file that cannot be read as a stopwatch is moved aside and logged.
    func load() -> [(name: String, snapshot: StopWatchSnapshot)] {
        do {
            try FileSystem.makeDirectories(directory, mode: 0o700)
        } catch {
            failed("cannot create the state directory \(directory): \(error)")
            return []
        }
        let names: [String]
        do {
            names = try FileSystem.entries(of: directory)
        } catch {
            failed("cannot read the state directory \(directory): \(error)")
            return []
        }
        let now = clocks()
        var restored: [(name: String, snapshot: StopWatchSnapshot)] = []
        for file in names.sorted() {
            if file.hasPrefix("."), file.hasSuffix(".tmp") {
                // A write that never reached its rename: the file it was replacing is intact.
                try? FileSystem.remove("\(directory)/\(file)")
                continue
            }
            guard file.hasSuffix(".json"), StopwatchName.isValid(String(file.dropLast(5))) else { continue }
            let name = String(file.dropLast(5))
            do {
                let bytes = try FileSystem.contents(of: path(of: name), limit: Self.maximumFileSize)
                let record = try StopwatchRecord(json: try JSONParser.parse(bytes))
                guard record.name == name else { throw MalformedMessage("it holds stopwatch '\(record.name)'") }
                restored.append((name, record.snapshot(restoredAt: now)))
            } catch {
                moveAside(name, because: "\(error)", at: now)
            }
        }
        return restored
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
                // The directory went away (or was never made): make it and try again.
                try FileSystem.makeDirectories(directory, mode: 0o700)
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
        if let snapshot {
            let record = StopwatchRecord(name: name, snapshot: snapshot, at: clocks())
            try FileSystem.writeAtomically(record.json.serialized, to: path(of: name), temporaryPath: temporaryPath(of: name))
        } else {
            try FileSystem.removeDurably(path(of: name))
        }
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

    private func moveAside(_ name: String, because reason: String, at now: ClockReading) {
        let aside = "\(path(of: name)).corrupt-\(FileSystem.timestamp(wall: now.wall))"
        do {
            try FileSystem.rename(path(of: name), to: aside)
            logger.error("stopwatch file \(path(of: name)) is unreadable (\(reason)); moved it to \(aside) and started without it")
        } catch {
            logger.error("stopwatch file \(path(of: name)) is unreadable (\(reason)) and could not be moved aside (\(error)); ignoring it")
        }
    }

    deinit {
        retryTimer?.cancel()
    }
}
