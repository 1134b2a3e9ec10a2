import Dispatch
import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// The outbox (SPEC §4, "Events and hooks"; §3, "Countdowns"): `outbox.jsonl` in the state
/// directory, where each batch of events is written before anyone hears of it, so that a
/// stop or a crash neither loses a hook run nor tells an expiry twice.
///
/// - Each event whose hooks are to run is a `run` line: the hook runner takes runs from
///   here, oldest first, and a `started` line marks those whose hooks have all started. At
///   start, the runs not marked are run, late. An event, not one line per hook: the hooks
///   are read when its runs start (as without the outbox: a hook added meanwhile runs
///   too), so a crash between two hooks of one event runs the first again (at worst twice,
///   as the SPEC allows).
/// - Each expiry told is a `told` line, kept until its stopwatch's file says it expired
///   (`expiriesSaved`). At start, an expiry told in this boot whose countdown is still
///   due, at that very instant, is recorded as expired without being told again.
///
/// A batch is one write (one line each), in the page cache when `record` returns: a
/// daemon killed then keeps it. A batch with runs is also flushed (`fdatasync`, one for
/// the batch) in `record`, on the server's queue, before its event is told: a run is never
/// lost, a power loss included, and only those with hooks pay for the flush. Told
/// expiries are not flushed: they matter only to a restart in the same boot (after a
/// reboot an instant on the boot clock means nothing, and one whose file was not written
/// yet is told again, late), and the page cache outlives a daemon. Runs are nothing but
/// lines: memory stays bounded however many wait (up to `backlog`; beyond, the oldest
/// waiting are dropped, and logged). Nothing is written when a batch has no expiry and no
/// hook directory exists.
///
/// The file never grows without bound: once nothing waits it is cut to nothing; while runs
/// keep waiting, the part before the oldest is dropped by an atomic replace once it is
/// both over `compactAbove` and over half the file. A torn last line is cut at start,
/// other bad lines are skipped (both logged); a file that is not a regular file of this
/// user is moved aside. When it cannot be written, runs wait in memory (lost at a stop,
/// which is logged) and expiries are told as before, saved just after.
///
/// Threading: any method from any thread. All state is under `state`'s lock: the server's
/// queue records batches, the hook runner's queue takes runs and marks them started, and
/// the outbox's own serial queue compacts, the only one that swaps the file.
// @unchecked Sendable: the mutable state is all in `state` (a `Locked`); the rest is
// immutable and Sendable.
final class EventOutbox: @unchecked Sendable {
    static let fileName = "outbox.jsonl"
    static let temporaryName = ".outbox.jsonl.tmp"

    /// Where a waiting run is: a line of the file, or (when it could not be written) memory.
    private enum Place {
        /// `restored`: written by an earlier daemon, so late by the time since it happened.
        case file(offset: Int64, length: Int, restored: Bool)
        case memory(StopwatchEvent)
    }

    private struct Run {
        var number: UInt64
        var place: Place
    }

    private struct State {
        var file: FileDescriptor?
        /// The file's length: where the next line goes.
        var end: Int64 = 0
        /// Runs waiting, oldest first.
        var waiting = FirstInFirstOut<Run>()
        /// The runs the runner took, oldest first, each until its hooks have started (in
        /// that order, but for a run with none to start).
        var taken: [Run] = []
        var nextNumber: UInt64 = 1
        /// What the last `started` line says.
        var markedThrough: UInt64 = 0
        var expiriesAwaitingSave = false
        /// Runs dropped since the backlog overflowed; nil while it does not.
        var droppedInBurst: Int?
        /// Why writing fails, while it does.
        var writeProblem: String?
        var maintenanceQueued = false

        var waitingCount: Int { waiting.count }

        /// Every run numbered up to this one has started (or was dropped).
        var startedThrough: UInt64 {
            let firstNotStarted = taken.first?.number ?? (waiting.first?.number ?? nextNumber)
            return firstNotStarted - 1
        }

        /// Where the oldest line still needed is, when a line of the file is: the first taken
        /// run's, else the first waiting in the file (runs are written in order, so the
        /// first is the oldest; those in memory, if any, come after a failed write).
        var liveStart: Int64? {
            for run in taken {
                if case .file(let offset, _, _) = run.place { return offset }
            }
            guard waitingInFile > 0 else { return nil }
            for run in waiting.elements {
                if case .file(let offset, _, _) = run.place { return offset }
            }
            return nil
        }

        /// Waiting runs that are lines of the file.
        var waitingInFile = 0

        mutating func appendWaiting(_ run: Run) {
            if case .file = run.place { waitingInFile += 1 }
            waiting.append(run)
        }

        mutating func popWaiting() -> Run? {
            guard let run = waiting.popFirst() else { return nil }
            if case .file = run.place { waitingInFile -= 1 }
            return run
        }
    }

    let backlog: Int
    private let directory: DirectoryDescriptor?
    private let lineLimit: Int
    private let compactAbove: Int64
    private let logger: Logger
    private let wallClock: any WallClock
    private let bootID: String
    private let userID: uid_t
    private let state = Locked(State())
    private let maintenance = DispatchQueue(label: "stopwatchd.outbox")
    /// The queue `record` is called on (the server's), if any: a compaction is asked for
    /// from its next turn.
    private let recordingQueue: DispatchQueue?
    /// The expiries told in this boot that the file held at start.
    let restoredExpiries: [ToldExpiry]

    /// The outbox of the state directory `directory` (its own descriptor, which it closes),
    /// read now: nil keeps runs in memory only (tests, a state directory that cannot be
    /// used).
    /// - Parameters:
    ///   - backlog: runs that may wait (`--hook-backlog`); beyond, the oldest is dropped.
    ///   - lineLimit: the longest line read back (a `Watch` reply with every lap).
    ///   - recordingQueue: the queue `record` is called on, whose next turn asks for a
    ///     compaction; nil asks at once.
    init(
        directory: DirectoryDescriptor?,
        backlog: Int,
        lineLimit: Int,
        logger: Logger,
        wallClock: any WallClock = SystemWallClock(),
        bootID: String = ClockReading.currentBootID,
        userID: uid_t = geteuid(),
        compactAbove: Int64 = 1 << 20,
        recordingQueue: DispatchQueue? = nil
    ) {
        self.directory = directory
        self.recordingQueue = recordingQueue
        self.backlog = max(backlog, 1)
        self.lineLimit = lineLimit
        self.compactAbove = compactAbove
        self.logger = logger
        self.wallClock = wallClock
        self.bootID = bootID
        self.userID = userID
        var restored: [ToldExpiry] = []
        if let directory {
            var loaded = State()
            restored = Self.load(into: &loaded, from: directory, lineLimit: lineLimit, backlog: self.backlog, bootID: bootID, userID: userID, logger: logger)
            var messages: [String] = []
            if loaded.droppedInBurst != nil {
                messages.append("hooks: more than \(self.backlog) runs wait (--hook-backlog); dropping the oldest until they are fewer")
            }
            Self.dropBeyond(self.backlog, &loaded, &messages)
            var marking: [(LogLevel, String)] = []
            Self.mark(&loaded, &marking)
            state.withLock { $0 = loaded }
            messages.forEach { logger.warning($0) }
            marking.forEach { logger.log($0.0, $0.1) }
        }
        restoredExpiries = restored
    }

    deinit {
        state.withLock { $0.file?.close() }
        directory?.close()
    }

    /// Whether a run waits, or is being started: the runner is busy (exit on idle waits).
    var hasRuns: Bool {
        state.withLock { !$0.taken.isEmpty || $0.waitingCount > 0 }
    }

    /// Runs waiting (not the one being started).
    var waitingCount: Int {
        state.withLock { $0.waitingCount }
    }

    // MARK: The server's side

    /// Before anyone hears of `batch`: writes its expiries, and its events' runs when
    /// `withRuns` (a hook directory exists), in one write, flushed when it holds runs.
    /// Runs that cannot be written wait in memory; expiries that cannot be written are
    /// not recorded (told again after a crash, as before the outbox).
    func record(_ batch: EventBatch, withRuns: Bool) {
        guard !batch.expiries.isEmpty || (withRuns && !batch.events.isEmpty) else { return }
        let wallNow = wallClock.nowMilliseconds()
        var messages: [(LogLevel, String)] = []
        let queueMaintenance = state.withLock { state -> Bool in
            var bytes: [UInt8] = []
            for expiry in batch.expiries { OutboxLine.told(expiry, bootID: bootID).encode(into: &bytes) }
            var runs: [(number: UInt64, start: Int, length: Int, event: StopwatchEvent)] = []
            if withRuns {
                for event in batch.events {
                    let number = state.nextNumber
                    state.nextNumber += 1
                    let start = bytes.count
                    let lateMs = max(event.late.milliseconds, 0)
                    OutboxLine.run(OutboxRun(number: number, atMs: max(wallNow - lateMs, 0), lateMs: lateMs, update: event.update, endedNote: event.endedNote))
                        .encode(into: &bytes)
                    runs.append((number, start, bytes.count - start - 1, event))
                }
            }
            let base = state.end
            // Only runs are flushed, and before anyone hears of their event (SPEC §4: a run is
            // never lost, a power loss included): one flush for the batch, paid only by those
            // with hooks. A told expiry matters only to the next start in this boot (after a
            // reboot, its instant means nothing), which the page cache serves.
            let written = Self.append(bytes, to: &state, &messages)
            if written, !runs.isEmpty, let file = state.file {
                do throws(Errno) {
                    try file.dataSync()
                } catch {
                    messages.append((.error, "cannot flush \(Self.fileName) in the state directory: \(error); its runs may be lost if the system stops now"))
                }
            }
            for run in runs {
                let place: Place = written ? .file(offset: base + Int64(run.start), length: run.length, restored: false) : .memory(run.event)
                state.appendWaiting(Run(number: run.number, place: place))
            }
            if written, !batch.expiries.isEmpty { state.expiriesAwaitingSave = true }
            var dropped: [String] = []
            let didDrop = Self.dropBeyond(backlog, &state, &dropped)
            messages += dropped.map { (.warning, $0) }
            if didDrop { Self.mark(&state, &messages) }
            return written && !runs.isEmpty && Self.queueMaintenance(&state)
        }
        for (level, message) in messages { logger.log(level, message) }
        guard queueMaintenance else { return }
        // Compaction waits for the server's next turn, where the batch's watchers are written
        // to: it wakes another thread, which must not come before them.
        if let recordingQueue {
            recordingQueue.async { self.maintenance.async { self.maintain() } }
        } else {
            maintenance.async { self.maintain() }
        }
    }

    /// The expiries recorded so far are in their stopwatches' files: their lines are no
    /// longer needed. (On the server's queue, where expiries are recorded and saved.)
    func expiriesSaved() {
        let queue = state.withLock { state -> Bool in
            guard state.expiriesAwaitingSave else { return false }
            state.expiriesAwaitingSave = false
            return Self.queueMaintenance(&state)
        }
        if queue { maintenance.async { self.maintain() } }
    }

    /// At stop: what was written is flushed, and the runs still waiting are named in the
    /// log, to run at the next start (or lost, those only in memory).
    func flushBeforeExit() {
        // A compaction under way ends first.
        maintenance.sync {}
        let (file, waiting, inMemory) = state.withLock { state in
            let runs = state.taken + state.waiting.elements
            let inMemory = runs.count { if case .memory = $0.place { true } else { false } }
            return (state.file, runs.count, inMemory)
        }
        try? file?.dataSync()
        if waiting > inMemory {
            let count = waiting - inMemory
            logger.notice("\(count) hook run\(count == 1 ? "" : "s") wait\(count == 1 ? "s" : ""): kept in \(Self.fileName), to run, late, when stopwatchd starts again")
        }
        if inMemory > 0 {
            logger.error("\(inMemory) hook run\(inMemory == 1 ? "" : "s") could not be written to \(Self.fileName) (\(state.withLock { $0.writeProblem } ?? "no state directory")); they are lost")
        }
    }

    // MARK: The runner's side

    /// The oldest run waiting, taken until `started` says its hooks have started (the runner
    /// may take a few ahead, and starts them in order); nil when none waits. A line that
    /// cannot be read back is skipped, and logged.
    func takeNext() -> (number: UInt64, event: StopwatchEvent)? {
        while true {
            var messages: [(LogLevel, String)] = []
            let outcome = state.withLock { state -> (run: Run?, event: StopwatchEvent?) in
                guard let run = state.popWaiting() else {
                    if let dropped = state.droppedInBurst {
                        state.droppedInBurst = nil
                        messages.append((.warning, "hooks: \(dropped) run\(dropped == 1 ? "" : "s") dropped: more than \(backlog) were waiting (--hook-backlog)"))
                    }
                    return (nil, nil)
                }
                state.taken.append(run)
                switch run.place {
                case .memory(let event):
                    return (run, event)
                case .file(let offset, let length, let restored):
                    switch read(run.number, at: offset, length: length, from: state.file) {
                    case .success(let line):
                        let late: Duration = restored
                            ? .milliseconds(max(wallClock.nowMilliseconds() - line.atMs, 1))
                            : .milliseconds(line.lateMs)
                        return (run, StopwatchEvent(update: line.update, late: late, endedNote: line.endedNote))
                    case .failure(let reason):
                        messages.append((.warning, "hooks: run \(run.number) in \(Self.fileName) cannot be read back (\(reason)); skipped"))
                        return (run, nil)
                    }
                }
            }
            for (level, message) in messages { logger.log(level, message) }
            guard let run = outcome.run else { return nil }
            guard let event = outcome.event else {
                started(run.number)
                continue
            }
            return (run.number, event)
        }
    }

    /// Every hook of run `number`, a taken one, has been started (or none was there). Most
    /// often the oldest taken; not always: a run with no hook to start (the hooks removed
    /// meanwhile, a line that cannot be read back) is done at once, while older runs still
    /// wait in the pool. The started mark covers only runs before the oldest still taken.
    func started(_ number: UInt64) {
        var messages: [(LogLevel, String)] = []
        let queue = state.withLock { state -> Bool in
            guard let index = state.taken.firstIndex(where: { $0.number == number }) else { return false }
            state.taken.remove(at: index)
            Self.mark(&state, &messages)
            // Worth a look only once the file may be cut, or a compaction may pay.
            guard state.liveStart.map({ $0 >= compactAbove }) ?? true else { return false }
            return Self.queueMaintenance(&state)
        }
        for (level, message) in messages { logger.log(level, message) }
        if queue { maintenance.async { self.maintain() } }
    }

    private func read(_ number: UInt64, at offset: Int64, length: Int, from file: FileDescriptor?) -> Result<OutboxRun, MalformedMessage> {
        guard let file else { return .failure(MalformedMessage("no file")) }
        let bytes: [UInt8]
        do {
            bytes = try file.read(upTo: length, at: offset)
        } catch {
            return .failure(MalformedMessage("\(error)"))
        }
        guard bytes.count == length else { return .failure(MalformedMessage("the file ends before it")) }
        do {
            guard case .run(let run) = try OutboxLine(decoding: bytes[...]), run.number == number else {
                return .failure(MalformedMessage("another line in its place"))
            }
            return .success(run)
        } catch {
            return .failure(error)
        }
    }

    // MARK: Writing

    /// Appends `bytes` at the end; false (logged once per episode) when it cannot, with
    /// nothing of them left in the file.
    private static func append(
        _ bytes: [UInt8],
        to state: inout State,
        _ messages: inout [(LogLevel, String)]
    ) -> Bool {
        guard !bytes.isEmpty else { return true }
        guard let file = state.file else { return false }
        do throws(Errno) {
            try file.writeAll(bytes, at: state.end)
        } catch {
            // Never a partial line in the middle of the file: the next one would follow it.
            try? file.truncate(to: state.end)
            if state.writeProblem == nil {
                messages.append((.error, "cannot write to \(fileName) in the state directory: \(error); hook runs wait in memory only (lost if stopwatchd stops), and an expiry told may be told again after a crash"))
            }
            state.writeProblem = "\(error)"
            return false
        }
        if let problem = state.writeProblem {
            messages.append((.notice, "\(fileName) is written again (it failed with: \(problem))"))
            state.writeProblem = nil
        }
        state.end += Int64(bytes.count)
        return true
    }

    /// Writes a `started` line when more runs have started since the last: at worst lost
    /// (not flushed), and those runs run again.
    private static func mark(_ state: inout State, _ messages: inout [(LogLevel, String)]) {
        let through = state.startedThrough
        guard through > state.markedThrough else { return }
        if state.file == nil || append(OutboxLine.started(through: through).bytes, to: &state, &messages) {
            state.markedThrough = through
        }
    }

    /// Drops the oldest waiting runs beyond `backlog`; true if it dropped any. The first
    /// drop of a burst is said at once, the count once nothing waits any more.
    @discardableResult
    private static func dropBeyond(_ backlog: Int, _ state: inout State, _ messages: inout [String]) -> Bool {
        let excess = state.waitingCount - backlog
        guard excess > 0 else { return false }
        for _ in 0..<excess { _ = state.popWaiting() }
        if state.droppedInBurst == nil {
            messages.append("hooks: more than \(backlog) runs wait (--hook-backlog); dropping the oldest until they are fewer")
        }
        state.droppedInBurst = (state.droppedInBurst ?? 0) + excess
        return true
    }

    // MARK: Compacting, on `maintenance`

    private static func queueMaintenance(_ state: inout State) -> Bool {
        guard !state.maintenanceQueued, state.file != nil else { return false }
        state.maintenanceQueued = true
        return true
    }

    /// On `maintenance`: cuts or compacts the file.
    private func maintain() {
        state.withLock { $0.maintenanceQueued = false }
        compact()
    }

    /// Used by tests: waits for the compaction asked for so far.
    func waitForMaintenance() {
        maintenance.sync {}
    }

    /// On `maintenance`: cuts the file to nothing once no line is needed, or replaces it by
    /// what is still needed once the rest is most of it and over `compactAbove`.
    private func compact() {
        let plan = state.withLock { state -> (file: FileDescriptor, start: Int64, end: Int64)? in
            guard let file = state.file, state.end > 0, !state.expiriesAwaitingSave else { return nil }
            guard let start = state.liveStart else {
                // Cut unflushed: a power loss that undoes it brings back lines already
                // done with, which only run again.
                do {
                    try file.truncate(to: 0)
                    state.end = 0
                } catch {}
                return nil
            }
            guard start >= compactAbove, start * 2 >= state.end else { return nil }
            return (file, start, state.end)
        }
        guard let plan, let directory else { return }
        // Copied without the lock (lines are only ever added after `end`), then what was
        // added meanwhile with it, and the new file put in place.
        let replacement: FileDescriptor
        do {
            try? directory.remove(Self.temporaryName)
            replacement = try directory.openFile(Self.temporaryName, [.readWrite, .create, .exclusive, .noFollow], mode: 0o600)
        } catch {
            logger.warning("cannot compact \(Self.fileName): \(error)")
            return
        }
        do throws(Errno) {
            try Self.copy(from: plan.file, plan.start..<plan.end, to: replacement, at: 0)
            try replacement.dataSync()
            try state.withLock { state throws(Errno) in
                if state.end > plan.end {
                    try Self.copy(from: plan.file, plan.end..<state.end, to: replacement, at: plan.end - plan.start)
                    try replacement.dataSync()
                }
                try directory.rename(Self.temporaryName, to: Self.fileName)
                try directory.sync()
                state.file?.close()
                state.file = replacement
                state.end -= plan.start
                func moved(_ run: Run) -> Run {
                    guard case .file(let offset, let length, let restored) = run.place else { return run }
                    return Run(number: run.number, place: .file(offset: offset - plan.start, length: length, restored: restored))
                }
                state.taken = state.taken.map(moved)
                state.waiting.update(moved)
            }
        } catch {
            replacement.close()
            try? directory.remove(Self.temporaryName)
            logger.warning("cannot compact \(Self.fileName): \(error)")
        }
    }

    private static func copy(from source: FileDescriptor, _ range: Range<Int64>, to target: FileDescriptor, at offset: Int64) throws(Errno) {
        var position = range.lowerBound
        while position < range.upperBound {
            let chunk = try source.read(upTo: Int(min(64 * 1024, range.upperBound - position)), at: position)
            guard !chunk.isEmpty else { throw Errno(EIO) }
            try target.writeAll(chunk, at: offset + (position - range.lowerBound))
            position += Int64(chunk.count)
        }
    }

    // MARK: Reading at start

    /// Opens (or makes) the file in `directory`, reads it into `state`, and returns the
    /// expiries told in this boot. Logs what it cut, skipped or moved aside.
    private static func load(
        into state: inout State,
        from directory: DirectoryDescriptor,
        lineLimit: Int,
        backlog: Int,
        bootID: String,
        userID: uid_t,
        logger: Logger
    ) -> [ToldExpiry] {
        // A compaction that never reached its rename: the file it was replacing is whole.
        try? directory.remove(temporaryName)
        let file: FileDescriptor
        do {
            file = try open(in: directory, userID: userID, logger: logger)
        } catch {
            logger.error("cannot open \(fileName) in the state directory: \(error); hook runs wait in memory only (lost if stopwatchd stops), and an expiry told may be told again after a crash")
            state.writeProblem = "\(error)"
            return []
        }
        // Told expiries beyond the runs' bound are of long ago: their files were written since.
        var scan = OutboxScan(lineLimit: lineLimit, bootID: bootID, maximumRuns: backlog, maximumTold: max(backlog, 100_000))
        do throws(Errno) {
            while true {
                let chunk = try file.read(upTo: 64 * 1024, at: scan.length)
                if chunk.isEmpty { break }
                scan.feed(chunk[...])
            }
            if scan.tornLength > 0 {
                try file.truncate(to: scan.wholeLength)
                logger.notice("cut a torn last line (\(scan.tornLength) bytes) off \(fileName), left by a crash")
            }
        } catch {
            // EIO and the like: what was read stands; nothing more is written to it.
            file.close()
            logger.error("cannot read \(fileName) in the state directory: \(error); hook runs wait in memory only, and what it held is ignored")
            state.writeProblem = "\(error)"
            return []
        }
        if scan.badLines > 0 {
            logger.warning("skipped \(scan.badLines) unreadable line\(scan.badLines == 1 ? "" : "s") of \(fileName) (the first: \(scan.firstBadLine ?? "?"))")
        }
        state.file = file
        state.end = scan.wholeLength
        state.nextNumber = scan.nextRun
        state.markedThrough = scan.startedThrough
        for run in scan.waiting {
            state.appendWaiting(Run(number: run.number, place: .file(offset: run.offset, length: run.length, restored: true)))
        }
        // More than the backlog waited: the oldest were left out by the read itself.
        if scan.droppedRuns > 0 { state.droppedInBurst = scan.droppedRuns }
        state.expiriesAwaitingSave = scan.toldLines > 0
        if !state.waiting.isEmpty {
            logger.info("\(state.waiting.count) hook run\(state.waiting.count == 1 ? "" : "s") left waiting by the last stopwatchd: run now, late")
        }
        return Array(scan.told)
    }

    /// The file, opened to read and write: made if missing (its entry flushed); anything
    /// but a regular file of this user in its place is moved aside, and a new one made.
    private static func open(in directory: DirectoryDescriptor, userID: uid_t, logger: Logger) throws(Errno) -> FileDescriptor {
        // Non-blocking: a FIFO in its place must not hold the start.
        let flags: OpenFlags = [.readWrite, .noFollow, .nonBlocking]
        for attempt in 0..<2 {
            let file: FileDescriptor
            do throws(Errno) {
                let created = try directory.openFile(fileName, flags.union([.create, .exclusive]), mode: 0o600)
                do throws(Errno) {
                    try directory.sync()
                } catch {
                    created.close()
                    throw error
                }
                return created
            } catch where error == .exists {
                do throws(Errno) {
                    file = try directory.openFile(fileName, flags)
                } catch where (error == .tooManyLinks || error == .noDeviceOrAddress) && attempt == 0 {
                    try moveAside(in: directory, because: "it is not a regular file", logger: logger)
                    continue
                }
            }
            let status: FileStatus
            do {
                status = try file.status()
            } catch {
                file.close()
                throw error
            }
            if status.kind == .regular, status.ownerID == userID { return file }
            file.close()
            guard attempt == 0 else { throw Errno(EPERM) }
            try moveAside(in: directory, because: status.kind == .regular ? "it belongs to another user" : "it is a \(status.kind), not a regular file", logger: logger)
        }
        throw Errno(EPERM)
    }

    private static func moveAside(in directory: DirectoryDescriptor, because reason: String, logger: Logger) throws(Errno) {
        let aside = "\(fileName).corrupt-\(FileSystem.timestamp(wall: Posix.clockTime(.realtime)))"
        try directory.rename(fileName, to: aside)
        logger.error("\(fileName) in the state directory is not the daemon's (\(reason)); moved it to \(aside) and made a new one")
    }
}
