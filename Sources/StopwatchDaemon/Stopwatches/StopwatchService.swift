import Dispatch
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
import Varlink

/// The methods of `io.stopwatchd` (SPEC §3), registered with a `VarlinkService`, and the
/// countdowns' expiries.
///
/// A change is applied, the snapshot it produced is saved, then the reply is made and the
/// hooks are told: in that order, in `record` and `tell`, so nobody hears of a command's
/// change before it is on disk. A countdown's expiry is a change made when its instant
/// comes (`ExpiryScheduler`), recorded as told in the outbox, told at once, and saved just
/// after (`expire` says why).
///
/// A counting interval that ends (a stop, a Countdown over a counting one, a Remove of a
/// counting one) is appended to the history first, before the state is saved: a crash in
/// between leaves the interval in the history and the stopwatch still counting in its file,
/// so the next stop records that stretch again (a duplicate), where the other order would
/// lose it. Its end is the wall clock now and its start the end minus the time counted on
/// the boot clock, so a clock step during the interval moves it whole rather than
/// stretching or shrinking it.
///
/// Not thread-safe: it belongs to the server's queue, with the registry.
final class StopwatchService {
    private let registry: StopwatchRegistry
    private let storage: any StopwatchStorage
    private let clock: any StopWatchClock
    private let queue: DispatchQueue
    private let expiryTimers: any TickTimerFactory
    private let logger: Logger
    /// Laps a stopwatch may hold until reset: a file and a reply stay bounded.
    private let maximumLaps: Int
    /// Called after each saved change, and when a watcher comes or goes (the status line
    /// counts both).
    private let changed: () -> Void
    /// Told of every event but ticks, after it is saved, a batch at a time, before anyone
    /// else hears of it: the outbox, for the hooks and for the expiries told.
    private let tell: (EventBatch) -> Void
    private let watches: StopwatchWatch.Context
    /// Where ended intervals go; nil keeps no history (tests of other things).
    private let history: HistoryJournal?
    private let wallClock: any WallClock
    /// Intervals a `History` reply holds at most (SPEC §3: 10,000); smaller in tests.
    private let historyBatchSize: Int
    /// What all `History` streams may hold together (`--history-memory`).
    private let historyMemory: HistoryMemory
    /// Lazy: its `due` calls back into the service, which is whole only after `init`.
    private(set) lazy var expiries = ExpiryScheduler(timers: expiryTimers, clock: clock, queue: queue) { [unowned self] in
        self.expire($0)
    }

    /// - Parameters:
    ///   - expiryTimers: the timer countdowns expire on: `BootTimerFactory` in production.
    ///   - queue: the server's queue, which the service belongs to.
    init(
        registry: StopwatchRegistry,
        storage: any StopwatchStorage,
        clock: any StopWatchClock,
        expiryTimers: any TickTimerFactory,
        queue: DispatchQueue,
        maximumLaps: Int,
        maximumPendingEvents: Int,
        logger: Logger,
        changed: @escaping () -> Void,
        tell: @escaping (EventBatch) -> Void = { _ in },
        history: HistoryJournal? = nil,
        wallClock: any WallClock = SystemWallClock(),
        historyBatchSize: Int = 10_000,
        historyMemory: HistoryMemory = HistoryMemory(limit: DaemonOptions().historyMemory)
    ) {
        self.history = history
        self.wallClock = wallClock
        self.historyBatchSize = historyBatchSize
        self.historyMemory = historyMemory
        self.registry = registry
        self.storage = storage
        self.clock = clock
        self.expiryTimers = expiryTimers
        self.queue = queue
        self.logger = logger
        self.maximumLaps = maximumLaps
        self.changed = changed
        self.tell = tell
        watches = StopwatchWatch.Context(
            registry: registry, clock: clock, maximumPendingEvents: maximumPendingEvents, logger: logger,
            watchersChanged: changed
        )
    }

    /// The interface, each method a handler. The handlers hold the service: registered, it
    /// lives as long as the `VarlinkService`.
    var interface: VarlinkInterface {
        VarlinkInterface(name: StopwatchdInterface.name, description: StopwatchdInterface.description, methods: [
            "Start": { call throws(VarlinkError) in try self.command(.start, call, creating: true) },
            "Toggle": { call throws(VarlinkError) in try self.command(.toggle, call, creating: true) },
            "Stop": { call throws(VarlinkError) in try self.command(.stop, call, creating: false) },
            "Reset": { call throws(VarlinkError) in try self.command(.reset, call, creating: false) },
            "Lap": { call throws(VarlinkError) in try self.command(.lap, call, creating: false) },
            "SetTarget": { call throws(VarlinkError) in
                try self.command(.setTarget(try self.target(in: call, required: false)), call, creating: true)
            },
            "Countdown": { call throws(VarlinkError) in
                // Checked before anything: a refused target creates nothing.
                guard let target = try self.target(in: call, required: true) else { throw .invalidParameter("target_ms") }
                return try self.command(.countdown(target), call, creating: true)
            },
            "Get": { call throws(VarlinkError) in try self.get(call) },
            "List": { _ in self.list() },
            "Remove": { call throws(VarlinkError) in try self.remove(call) },
            "Watch": { call throws(VarlinkError) in try self.watch(call) },
            "History": { call throws(VarlinkError) in try self.history(call) },
            "Track": { call throws(VarlinkError) in try self.corrections(call).track(call) },
            "Amend": { call throws(VarlinkError) in try self.corrections(call).amend(call) },
            "Delete": { call throws(VarlinkError) in try self.corrections(call).delete(call) },
            "Undo": { call throws(VarlinkError) in try self.corrections(call).undo(call) },
        ])
    }

    /// The history's corrections (`IntervalCorrections`), for a call; none without a history.
    private func corrections(_ call: VarlinkCall) throws(VarlinkError) -> IntervalCorrections {
        guard let history else { throw .methodNotFound(call.method) }
        return IntervalCorrections(journal: history, wallClock: wallClock) { [self] in
            let wallNow = wallClock.nowMilliseconds()
            return registry.createdStopwatches.compactMap { openInterval($0.name, $0.useCase.state.current, wallNow: wallNow) }
        }
    }

    /// Schedules the expiries of the stopwatches restored at start. One that fell while the
    /// daemon was down is due at once, and told with how late it is.
    ///
    /// `told`: the expiries the outbox says were told in this boot (a crash came before
    /// their files said so). One whose countdown is still due at that very instant is
    /// recorded as expired and saved soon, without being told again; any other (a countdown set
    /// anew, resumed or retargeted since) is not that expiry, and changes nothing.
    func resumeCountdowns(told: [ToldExpiry] = []) {
        var recorded: [String] = []
        for expiry in told {
            guard let useCase = registry.created(expiry.name), useCase.state.current.expiry == expiry.instant,
                let after = try? perform(.expire, on: useCase), after.hasExpired
            else { continue }
            recorded.append(expiry.name)
        }
        // In later turns, their flushes shared: after a crash in a storm these are thousands,
        // and one at a time (two flushes each) would hold READY back.
        if !recorded.isEmpty { storage.saveSoon(recorded) }
        if !recorded.isEmpty {
            let named = recorded.prefix(3).map { "'\($0)'" }.joined(separator: ", ") + (recorded.count > 3 ? " and \(recorded.count - 3) more" : "")
            logger.info("\(recorded.count) expir\(recorded.count == 1 ? "y" : "ies") told before stopwatchd stopped, not yet saved, recorded now without telling again: \(named)")
        }
        for (name, useCase) in registry.createdStopwatches {
            expiries.update(name, useCase.state.current)
        }
    }

    private func command(_ command: StopWatchCommand, _ call: VarlinkCall, creating: Bool) throws(VarlinkError) -> VarlinkAnswer {
        let name = try name(in: call)
        let existed = registry.created(name) != nil
        // Stop, Reset and Lap create nothing: on a name never created (or removed) they are
        // refused, so a typo is told rather than taken as a no-op (SPEC §3), and nothing is
        // saved, recorded or told.
        guard let useCase = creating ? try registry.create(name) : registry.created(name) else {
            throw .noSuchStopwatch(name)
        }
        expireIfDue(name, useCase)
        let before = useCase.state.current
        // Commands reach a stopwatch only from this queue, so the count cannot change before
        // the lap is taken.
        if command == .lap, before.state.isCounting, before.laps.count >= maximumLaps {
            throw .tooManyLaps(limit: maximumLaps)
        }
        let after: StopWatchSnapshot
        do {
            after = try perform(command, on: useCase)
        } catch {
            throw .invalidTransition(Stopwatch(name: name, snapshot: error.snapshot, at: clock.now()), method: call.memberName)
        }
        if after != before || !existed, let event = record(name, from: before, to: after) {
            tell(EventBatch(events: [event]))
        }
        return reply(name, after)
    }

    /// Countdowns whose instants came: the batch is recorded as told in the outbox (one
    /// write, in the page cache), then told, then saved in later turns of the queue, after
    /// their watchers have been written to.
    ///
    /// Recorded before anyone hears of it: a daemon killed after telling finds the record at
    /// its next start and does not tell it again (`resumeCountdowns`). Not saved first:
    /// watchers and hooks hear of an expiry at its instant, not a disk flush later (a state
    /// file's two `fsync`s, or even one `fdatasync`, milliseconds each, and a burst of
    /// 10,000 is not held up by 10,000 writes). The record needs no flush: it lives in the
    /// page cache, which outlives the daemon, and after a reboot an instant on the boot
    /// clock means nothing. So only a crash of the machine before the file is written has
    /// the expiry told again at the next start, late, never lost.
    private func expire(_ expiries: [(name: String, instant: Duration)]) {
        var expired: [String] = []
        var late: [(name: String, late: Duration)] = []
        var batch = EventBatch()
        for (name, instant) in expiries {
            guard let useCase = registry.created(name) else { continue }
            let before = useCase.state.current
            // `expire` refuses nothing, and changes nothing before the instant (which has come:
            // one clock). The watchers hear of it in a later turn of this queue: the use case
            // delivers to its sinks asynchronously, after `tell` below.
            guard let after = try? perform(.expire, on: useCase), after != before else { continue }
            let lateness = max(clock.now() - instant, .zero)
            if lateness >= .seconds(1) { late.append((name, lateness)) }
            if let event = record(name, from: before, to: after, late: lateness, saving: .afterTelling) { batch.events.append(event) }
            batch.expiries.append(ToldExpiry(name: name, instant: before.expiry ?? instant))
            expired.append(name)
        }
        logLate(late)
        if !batch.isEmpty { tell(batch) }
        storage.saveSoon(expired)
    }

    /// A line for each of a few late expiries; a burst (thousands of countdowns after a
    /// suspend or a restart) in one line for each batch the scheduler hands over: a line each
    /// would run into journald's rate limit for this service, which would then drop the
    /// daemon's other lines (hook failures, errors) too. Lateness in whole seconds: only a
    /// second or more is logged, and "2400123ms" helps nobody.
    private func logLate(_ late: [(name: String, late: Duration)]) {
        let namedAtMost = 3
        let why = "(stopwatchd was not running, the system was suspended, or stopwatchd was busy); told now"
        func text(_ lateness: Duration) -> String { DurationText.string(.seconds(lateness.components.seconds)) }
        guard late.count > namedAtMost else {
            for (name, lateness) in late {
                logger.info("countdown '\(name)' expired \(text(lateness)) ago \(why)")
            }
            return
        }
        let latest = late.map(\.late).max() ?? .zero
        let named = late.prefix(namedAtMost).map { "'\($0.name)'" }.joined(separator: ", ")
        logger.info("\(late.count) countdowns expired up to \(text(latest)) ago \(why): \(named) and \(late.count - namedAtMost) more")
    }

    /// A countdown whose instant has passed, but whose turn has not come yet (the timer's
    /// handler waits behind this call), expires before a command changes it: a Stop just
    /// after the instant must not swallow the expiry.
    private func expireIfDue(_ name: String, _ useCase: StopWatchUseCase) {
        guard let instant = useCase.state.current.expiry, instant <= clock.now() else { return }
        expire([(name, instant)])
    }

    enum SaveOrder {
        /// Saved, then told: a command's change, which its reply must not announce before
        /// it is on disk (SPEC §4).
        case beforeTelling
        /// Recorded as told in the outbox, told, then saved in a later turn of the queue
        /// (by the caller): an expiry.
        case afterTelling
    }

    /// A change made: saved, counted and scheduled; the event to tell, if it is one.
    private func record(
        _ name: String,
        from before: StopWatchSnapshot,
        to after: StopWatchSnapshot,
        late: Duration = .zero,
        saving order: SaveOrder = .beforeTelling
    ) -> StopwatchEvent? {
        if before.endsInterval(goingTo: after) { recordInterval(name, before) }
        if order == .beforeTelling { storage.save(name, after) }
        changed()
        expiries.update(name, after)
        guard after != before else { return nil }
        let update = WatchUpdate(
            stopwatch: Stopwatch(name: name, snapshot: after, at: clock.now()), event: WatchEvent(from: before, to: after)
        )
        return StopwatchEvent(update: update, late: late)
    }

    private func perform(_ command: StopWatchCommand, on useCase: StopWatchUseCase) throws(InvalidTransition) -> StopWatchSnapshot {
        do {
            return try useCase.dispatcher.perform(command)
        } catch let refusal as InvalidTransition {
            throw refusal
        } catch {
            // perform only throws the handler's refusals, or misuse from the handler's queue,
            // which the server never is on.
            preconditionFailure("unexpected error from a stopwatch: \(error)")
        }
    }

    private func get(_ call: VarlinkCall) throws(VarlinkError) -> VarlinkAnswer {
        let name = try name(in: call)
        return reply(name, registry.created(name)?.state.current ?? .stopped)
    }

    private func list() -> VarlinkAnswer {
        let now = clock.now()
        let stopwatches = registry.createdStopwatches.map {
            Stopwatch(name: $0.name, snapshot: $0.useCase.state.current, at: now).json
        }
        return .reply(["stopwatches": .array(stopwatches)])
    }

    private func remove(_ call: VarlinkCall) throws(VarlinkError) -> VarlinkAnswer {
        // Required here: removing "default" by leaving the name out would be too easy.
        guard case .string(let name)? = call.parameters["name"] else { throw .invalidParameter("name") }
        guard StopwatchName.isValid(name) else { throw .invalidName(name) }
        // A typo is told, as for Stop (`command`).
        guard let useCase = registry.created(name) else { throw .noSuchStopwatch(name) }
        expireIfDue(name, useCase)
        let before = useCase.state.current
        if before.state.isCounting { recordInterval(name, before) }
        // On disk before anyone hears of it, watchers included.
        storage.save(name, nil)
        registry.remove(name)
        changed()
        expiries.update(name, nil)
        let removed = WatchUpdate(stopwatch: Stopwatch(name: name, snapshot: .stopped, at: clock.now()), event: .removed)
        tell(EventBatch(events: [StopwatchEvent(update: removed)]))
        return .reply([:])
    }

    private func watch(_ call: VarlinkCall) throws(VarlinkError) -> VarlinkAnswer {
        let name = try name(in: call)
        guard call.more else { throw .expectedMore }
        return .stream(StopwatchWatch(name: name, context: watches))
    }

    /// Appends the counting interval `snapshot` is in, ending now, to the history.
    private func recordInterval(_ name: String, _ snapshot: StopWatchSnapshot) {
        let wallNow = wallClock.nowMilliseconds()
        guard let history, let interval = openInterval(name, snapshot, wallNow: wallNow) else { return }
        history.append(Interval(name: name, startMs: interval.startMs, endMs: max(wallNow, interval.startMs), elapsedMs: interval.elapsedMs))
    }

    /// The interval `snapshot` counts in, as of `wallNow`, without an end; nil when it does
    /// not count.
    private func openInterval(_ name: String, _ snapshot: StopWatchSnapshot, wallNow: Int64) -> Interval? {
        guard snapshot.state.isCounting, let elapsed = snapshot.intervalElapsed(at: clock.now()) else { return nil }
        let elapsedMs = elapsed.milliseconds
        let (start, overflow) = wallNow.subtractingReportingOverflow(elapsedMs)
        return Interval(name: name, startMs: overflow ? 0 : max(start, 0), endMs: nil, elapsedMs: elapsedMs)
    }

    private func history(_ call: VarlinkCall) throws(VarlinkError) -> VarlinkAnswer {
        var query = HistoryQuery()
        switch call.parameters["name"] {
        case nil, .null?: break
        case .string(let name)?:
            guard StopwatchName.isValid(name) else { throw .invalidName(name) }
            query.name = name
        default: throw .invalidParameter("name")
        }
        query.since = try time(in: call, "since_ms")
        query.until = try time(in: call, "until_ms")
        guard let history else { throw .methodNotFound(call.method) }
        let wallNow = wallClock.nowMilliseconds()
        // Still counting: the newest, by when they began.
        let open = registry.createdStopwatches.compactMap { openInterval($0.name, $0.useCase.state.current, wallNow: wallNow) }
        let tail = history.unwritten + open.sorted { $0.startMs < $1.startMs }
        return .stream(HistoryStream(
            query: query, more: call.more, journal: history, memory: historyMemory, queue: queue, tail: tail,
            batchSize: historyBatchSize
        ))
    }

    /// An optional time parameter, in milliseconds since the epoch.
    private func time(in call: VarlinkCall, _ key: String) throws(VarlinkError) -> Int64? {
        switch call.parameters[key] {
        case nil, .null?: return nil
        case .int(let value)?: return value
        default: throw .invalidParameter(key)
        }
    }

    private func reply(_ name: String, _ snapshot: StopWatchSnapshot) -> VarlinkAnswer {
        .reply(["stopwatch": Stopwatch(name: name, snapshot: snapshot, at: clock.now()).json])
    }

    /// The `name` parameter: absent or null means "default"; anything else must be a valid name.
    private func name(in call: VarlinkCall) throws(VarlinkError) -> String {
        switch call.parameters["name"] {
        case nil, .null?: return StopwatchName.defaultName
        case .string(let name)?:
            guard StopwatchName.isValid(name) else { throw .invalidName(name) }
            return name
        default: throw .invalidParameter("name")
        }
    }

    /// The `target_ms` parameter: an integer of 1 ms to 366 days; absent or null is nil,
    /// which only SetTarget accepts (a plain stopwatch again).
    private func target(in call: VarlinkCall, required: Bool) throws(VarlinkError) -> Duration? {
        switch call.parameters["target_ms"] {
        case nil where !required, .null? where !required: return nil
        case .int(let milliseconds)?:
            guard let target = CountdownTarget.duration(milliseconds: milliseconds) else { throw .invalidParameter("target_ms") }
            return target
        default: throw .invalidParameter("target_ms")
        }
    }
}

/// Where the service makes a change durable before it replies: `StateStore` in the daemon,
/// an in-memory recorder in tests.
protocol StopwatchStorage: AnyObject {
    /// Writes stopwatch `name` as `snapshot`; nil deletes it.
    func save(_ name: String, _ snapshot: StopWatchSnapshot?)
    /// Writes stopwatches `names` as they are then, in a later turn of the queue: after what
    /// this turn tells (an expiry's watchers, at its instant, wait for no disk; the outbox
    /// holds it as told meanwhile).
    func saveSoon(_ names: [String])
}

extension StateStore: StopwatchStorage {}
