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
/// A Start, Stop or Toggle with `at_ms` is the same change dated that long before now
/// (`StopWatchCommand.transition`): the core refuses one before the stopwatch's latest
/// transition, interval start or lap; the service refuses one in the future, and a start
/// whose counting interval would overlap an ended one in the history. The interval a stop
/// in the past ends has that wall-clock end.
///
/// Not thread-safe: it belongs to the server's queue, with the registry.
final class StopwatchService {
    private let registry: StopwatchRegistry
    private let storage: any StopwatchStorage
    private let clock: any StopWatchClock
    private let queue: DispatchQueue
    private let expiryTimers: any TickTimerFactory
    private let awakeExpiryTimers: any TickTimerFactory
    private let openIntervalsTimers: any TickTimerFactory
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
    private(set) lazy var expiries = ExpiryScheduler(
        timers: expiryTimers, awakeTimers: awakeExpiryTimers, clock: clock, queue: queue
    ) { [weak self] in
        // Weak, as `openIntervals`' write: a fire of a later turn may run while the service
        // goes away (a test's fixture; the daemon's lives as long as the process).
        self?.expire($0)
    }
    /// When `open.json` is written (nil: no history). Lazy, as `expiries`. Its write holds the
    /// service weakly: a write of a later turn may run while the service goes away (a test's
    /// fixture released meanwhile; the daemon's lives as long as the process).
    private(set) lazy var openIntervals: OpenIntervalsSchedule? = history.map { _ in
        OpenIntervalsSchedule(queue: queue, timers: openIntervalsTimers, clock: clock) { [weak self] in self?.writeOpenIntervals() }
    }
    /// The counting stopwatches, each as of its last change, with its interval's id: what
    /// `open.json` lists. Kept by every change (`record`, `remove`; made whole at start by
    /// `resumeCountdowns`, `countAllAgain`), so that a write takes it as it is (a dictionary's copy, shared
    /// until the next change), not by reading every stopwatch on this queue: a thousand
    /// took milliseconds, which a phase change due then waited for.
    private var counting: [StopwatchKey: CountingStopwatch] = [:]
    /// The ids of phases' intervals found in the history at start while their stopwatch's
    /// file still ran them (`resumeCountdowns`): their end is told, not appended again.
    private var phasesEndedInHistory: Set<String> = []
    /// Where the interval of a phase begun by an automatic change begins: the end of the one
    /// before, by its id, until it ends (memory only: after a restart it is computed again).
    private var phaseStartMs: [String: Int64] = [:]
    /// How far in the future an `at_ms` may be and still be taken as now: the client's
    /// clock read a moment before the daemon's, or on another machine near it.
    static let atSkewMs: Int64 = 100
    /// How far back an `at_ms` may be: as long as Track's longest interval (SPEC §3), so a
    /// typo of a year is told rather than taken.
    static let atMaximumAgoMs: Int64 = 366 * 86_400_000

    /// - Parameters:
    ///   - expiryTimers: the timer countdowns expire on: `LoopTimerFactory` in production.
    ///   - awakeExpiryTimers: the timer countdowns that skip sleep expire on (the awake
    ///     clock): `LoopTimerFactory(clock: .monotonic)` in production.
    ///   - openIntervalsTimers: the timer `open.json`'s writes wait on (`OpenIntervalsSchedule`):
    ///     a libdispatch one, not the countdowns' `timerfd`.
    ///   - queue: the server's queue, which the service belongs to.
    init(
        registry: StopwatchRegistry,
        storage: any StopwatchStorage,
        clock: any StopWatchClock,
        expiryTimers: any TickTimerFactory,
        awakeExpiryTimers: any TickTimerFactory,
        openIntervalsTimers: any TickTimerFactory = DispatchTickTimerFactory(leeway: .milliseconds(50)),
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
        self.awakeExpiryTimers = awakeExpiryTimers
        self.openIntervalsTimers = openIntervalsTimers
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
        VarlinkInterface(name: StopwatchdInterface.name, description: StopwatchdInterface.description, methods: self.methods, plainMethods: [
            // A status bar's Get, answered without the call's tree or the reply's.
            "Get": { name in self.plainGet(name) },
            // List takes no parameters: a name given is ignored, as the full method does.
            "List": { _ in Stopwatch.listReplyMessage(self.listed()) },
        ])
    }

    private var methods: [String: VarlinkInterface.Method] {
        [
            "Start": { call throws(VarlinkError) in try self.transition(.start, call) },
            "Toggle": { call throws(VarlinkError) in try self.transition(.toggle, call) },
            "Stop": { call throws(VarlinkError) in try self.transition(.stop, call) },
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
            "SetCountsSleep": { call throws(VarlinkError) in
                guard case .bool(let counts)? = call.parameters["counts_sleep"] else { throw .invalidParameter("counts_sleep") }
                return try self.command(.setCountsSleep(counts), call, creating: true)
            },
            "Track": { call throws(VarlinkError) in try self.corrections(call).track(call) },
            "Amend": { call throws(VarlinkError) in try self.corrections(call).amend(call) },
            "Delete": { call throws(VarlinkError) in try self.corrections(call).delete(call) },
            "Undo": { call throws(VarlinkError) in try self.corrections(call).undo(call) },
            "StartCycle": { call throws(VarlinkError) in
                // Checked before anything: a refused plan creates nothing.
                try self.command(.startCycle(try self.cycle(in: call)), call, creating: true)
            },
            "Next": { call throws(VarlinkError) in try self.command(.next, call, creating: false) },
            "Snooze": { call throws(VarlinkError) in
                guard case .int(let milliseconds)? = call.parameters["by_ms"], milliseconds >= CyclePlan.snooze.lowerBound.milliseconds,
                    milliseconds <= CyclePlan.snooze.upperBound.milliseconds
                else { throw .invalidParameter("by_ms") }
                return try self.command(.snooze(by: .milliseconds(milliseconds)), call, creating: false)
            },
            "Restart": { call throws(VarlinkError) in try self.command(.restart, call, creating: false) },
            "Devices": { call throws(VarlinkError) in
                guard let history = self.history else { throw .methodNotFound(call.method) }
                return .reply(["devices": .array(try history.devices().map(\.json))])
            },
        ]
    }

    /// The history's corrections (`IntervalCorrections`), for a call; none without a history.
    private func corrections(_ call: VarlinkCall) throws(VarlinkError) -> IntervalCorrections {
        guard let history else { throw .methodNotFound(call.method) }
        return IntervalCorrections(journal: history, wallClock: wallClock) { [self] in
            openIntervals(wallNow: wallClock.nowMilliseconds())
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
            if recorded.last != expiry.name { recorded.append(expiry.name) }
            // An automatic cycle went on to its next phase at that instant, and the phase's
            // interval was appended to the history before the expiry was told: the same
            // change again, without a second line, its next phase with the id it had. The
            // told expiries of one cycle come in order, so a later one matches the phase
            // this makes.
            let endedID = registry.intervalID(of: expiry.name)
            if after.cycle?.auto == true, let advanced = try? perform(.advance, on: useCase), advanced != after {
                let position = advanced.cycle.map { (phase: $0.phase, round: $0.round) } ?? (phase: 0, round: 1)
                registry.setIntervalID(
                    endedID.map { IntervalIdentity.following($0, phase: position.phase, round: position.round) } ?? IntervalIdentity.random(),
                    of: expiry.name
                )
            }
        }
        // Phases whose ends reached the history but whose expiries the outbox does not hold
        // (stopped between the two): told at start as any late expiry, but not appended
        // twice. Their ids are derived one from the other (`IntervalIdentity.following`), so
        // the phases the catch-up makes have the ids they had: those in the history since the
        // earliest phase due are skipped (`recordInterval`). One pass over the history.
        var dueCycles: Set<StopwatchKey> = []
        var earliestEndMs = Int64.max
        let wallNow = wallClock.nowMilliseconds()
        let instant = clock.instant()
        // In no order: a set and a minimum (sorting 10,000 names cost READY 10 ms).
        for (name, useCase) in registry.createdInAnyOrder {
            let current = useCase.state.current
            guard current.cycle?.auto == true, let due = current.expiry, due <= current.reading(at: instant) else { continue }
            dueCycles.insert(StopwatchKey(name))
            earliestEndMs = min(earliestEndMs, wallNow - (current.reading(at: instant) - due).milliseconds)
        }
        if let history, !dueCycles.isEmpty {
            // A second's margin: the end was written from clocks read apart.
            phasesEndedInHistory = history.endedIntervalIDs(names: dueCycles, sinceMs: earliestEndMs - 1000)
        }
        // Later, their flushes shared (`saveSoon`): after a crash in a storm these are
        // thousands, and one at a time (two flushes each) would hold READY back.
        if !recorded.isEmpty { storage.saveSoon(recorded) }
        if !recorded.isEmpty {
            let named = recorded.prefix(3).map { "'\($0)'" }.joined(separator: ", ") + (recorded.count > 3 ? " and \(recorded.count - 3) more" : "")
            logger.info("\(recorded.count) expir\(recorded.count == 1 ? "y" : "ies") told before stopwatchd stopped, not yet saved, recorded now without telling again: \(named)")
        }
        // By name, so that the scheduler is given them in the same order at every start, and
        // expiries at one instant are told in the same order each time; only those with an
        // expiry, or one scheduled, are sorted: an update changes nothing for the others.
        let scheduling = registry.createdInAnyOrder
            .map { (key: StopwatchKey($0.name), name: $0.name, snapshot: $0.useCase.state.current) }
            .filter { $0.snapshot.expiry != nil || expiries.instant(of: $0.name) != nil }
            .sorted { $0.key < $1.key }
        for stopwatch in scheduling { expiries.update(stopwatch.name, stopwatch.snapshot) }
        countAllAgain()
    }

    /// Start, Stop or Toggle, with their `at_ms` (all three) and `note` (Start and Toggle),
    /// both checked before anything: a refusal creates and changes nothing.
    private func transition(_ kind: StopWatchCommand.Transition, _ call: VarlinkCall) throws(VarlinkError) -> VarlinkAnswer {
        let atMs = try time(in: call, "at_ms")
        var note: String?
        if kind != .stop {
            switch call.parameters["note"] {
            case nil, .null?: break
            case .string(let given)? where IntervalNote.isValid(given): note = given
            default: throw .invalidParameter("note")
            }
        }
        guard let atMs else {
            let plain: StopWatchCommand = switch kind {
            case .start: .start
            case .stop: .stop
            case .toggle: .toggle
            }
            return try command(note == nil ? plain : .transition(kind, ago: .zero, note: note), call, creating: kind != .stop)
        }
        // Read together: the instant is placed on the boot clock as of this reading, however
        // long the checks before the command take.
        let wallNowPrecise = wallClock.now()
        let bootAtRead = clock.now()
        let wallNow = wallNowPrecise.milliseconds
        guard atMs <= wallNow + Self.atSkewMs else {
            throw .invalidInterval("at_ms \(UTCTime.text(atMs)) is in the future: it may be at most now, \(UTCTime.text(wallNow))")
        }
        let earliestMs = max(wallNow - Self.atMaximumAgoMs, 0)
        guard atMs >= earliestMs else {
            throw .invalidInterval(
                "at_ms \(UTCTime.text(atMs)) is more than 366 days ago: it may be from \(UTCTime.text(earliestMs)) to now, \(UTCTime.text(wallNow))"
            )
        }
        let dated = DatedTransition(atMs: min(atMs, wallNow), wallNow: wallNow, wallNowPrecise: wallNowPrecise, bootAtRead: bootAtRead)
        return try command(.transition(kind, ago: dated.ago(at: bootAtRead), note: note), call, creating: kind != .stop, dated: dated)
    }

    /// A transition dated in the past: when, and the wall clock it was measured against.
    private struct DatedTransition {
        let atMs: Int64
        let wallNow: Int64
        /// `wallNow` to the nanosecond.
        let wallNowPrecise: Duration
        /// The boot clock, read just after the wall clock.
        let bootAtRead: Duration

        /// How long before the boot clock's reading `boot` it is dated: from the wall clock to
        /// the nanosecond, or the fraction of a millisecond each command is read at would come
        /// between two dated transitions (a start dated 09:25 and a stop dated 12:30 would be
        /// 3:04:59.999 apart); and from when the clocks were read, or the time the checks took
        /// in between (the history's overlap, a millisecond or more) would be taken off too.
        func ago(at boot: Duration) -> Duration {
            max(wallNowPrecise - .milliseconds(atMs) + (boot - bootAtRead), .zero)
        }

        /// The refusal of an instant earlier than `earliestAgo` before the command allows,
        /// saying the range that is allowed.
        func tooEarly(_ name: String, earliestAgo: Duration) -> VarlinkError {
            let earliest = Self.roundedUpToASecond(wallNow - earliestAgo.milliseconds)
            return .invalidInterval(
                "at_ms \(UTCTime.text(atMs)) is before '\(name)' last started, stopped or took a lap: "
                    + "it may be from \(UTCTime.text(min(earliest, wallNow))) to now, \(UTCTime.text(wallNow))"
            )
        }

        /// `milliseconds` rounded up to a whole second, as `UTCTime.text` shows it: every
        /// instant a refusal names is then allowed.
        static func roundedUpToASecond(_ milliseconds: Int64) -> Int64 {
            let intoSecond = ((milliseconds % 1000) + 1000) % 1000
            return intoSecond == 0 ? milliseconds : milliseconds + 1000 - intoSecond
        }
    }

    private func command(
        _ command: StopWatchCommand, _ call: VarlinkCall, creating: Bool, dated: DatedTransition? = nil
    ) throws(VarlinkError) -> VarlinkAnswer {
        let name = try name(in: call)
        let existed = registry.created(name) != nil
        // Before anything is created: a start refused for its overlap leaves no stopwatch.
        if let dated, case .transition(let kind, _, _) = command, kind != .stop,
            registry.created(name)?.state.current.state.isCounting != true
        {
            try checkNoOverlap(name, startingAt: dated)
        }
        // Stop, Reset and Lap create nothing: on a name never created (or removed) they are
        // refused, so a typo is told rather than taken as a no-op (SPEC §3), and nothing is
        // saved, recorded or told.
        guard let useCase = creating ? try registry.create(name) : registry.created(name) else {
            throw .noSuchStopwatch(name)
        }
        try expireIfDue(name, useCase, call)
        let before = useCase.state.current
        // An interval it would end that cannot be written (another writer's folder): refused
        // before the change, so that the stopwatch still holds it.
        if before.state.isCounting, Self.mayEndInterval(command) {
            try history?.ensureWritable(endingAt: dated?.atMs ?? wallClock.nowMilliseconds())
        }
        // Dated again as of now: the checks above took time since the clocks were read.
        var command = command
        if let dated, case .transition(let kind, _, let note) = command {
            command = .transition(kind, ago: dated.ago(at: clock.now()), note: note)
        }
        // Commands reach a stopwatch only from this queue, so the count cannot change before
        // the lap is taken.
        if command == .lap, before.state.isCounting, before.laps.count >= maximumLaps {
            throw .tooManyLaps(limit: maximumLaps)
        }
        let after: StopWatchSnapshot
        do {
            after = try perform(command, on: useCase)
        } catch let refusal where Self.withinAMillisecond(command, refusal) {
            // The wall clock is read to the millisecond, the stopwatch's to the nanosecond: an
            // instant given as the very millisecond of the latest transition may come out a
            // fraction before it. Taken as that transition's instant.
            guard case .transition(let kind, _, let note) = command, let earliestAgo = refusal.earliestAgo,
                let retried = try? perform(.transition(kind, ago: earliestAgo, note: note), on: useCase)
            else { throw refused(refusal, name, call, dated) }
            after = retried
        } catch {
            throw refused(error, name, call, dated)
        }
        if after != before || !existed, let event = record(name, from: before, to: after, ended: dated) {
            tell(EventBatch(events: [event]))
        }
        // A countdown started in the past whose instant has passed: due now, and late because
        // of when it was started, not because the daemon was away.
        if dated != nil, let due = after.expiry, due <= after.reading(at: clock.instant()) {
            expire([(name, due)], startedInThePast: true)
        }
        return reply(name, after)
    }

    /// Whether `command` on a counting stopwatch may end its interval.
    private static func mayEndInterval(_ command: StopWatchCommand) -> Bool {
        switch command {
        case .start, .reset, .lap, .setTarget, .setCountsSleep, .expire, .snooze: false
        case .transition(let kind, _, _): kind != .start
        case .stop, .toggle, .countdown, .startCycle, .next, .advance, .restart: true
        }
    }

    /// Whether `refusal` of `command` is for an instant less than a millisecond too early.
    private static func withinAMillisecond(_ command: StopWatchCommand, _ refusal: InvalidTransition) -> Bool {
        guard case .transition(_, let ago, _) = command, let earliestAgo = refusal.earliestAgo else { return false }
        return ago - earliestAgo < .milliseconds(1)
    }

    /// What the client is told of `refusal`: for an instant too early, `InvalidInterval` with
    /// the allowed range; else `InvalidTransition`.
    private func refused(_ refusal: InvalidTransition, _ name: String, _ call: VarlinkCall, _ dated: DatedTransition?) -> VarlinkError {
        if let dated, let earliestAgo = refusal.earliestAgo { return dated.tooEarly(name, earliestAgo: earliestAgo) }
        return .invalidTransition(Stopwatch(name: name, snapshot: refusal.snapshot, at: clock.instant()), method: call.memberName)
    }

    /// A start dated `dated.atMs` opens a counting interval [at, now): refused when an ended
    /// interval of the same name in the history overlaps it.
    private func checkNoOverlap(_ name: String, startingAt dated: DatedTransition) throws(VarlinkError) {
        let endMs = max(dated.wallNow, dated.atMs + 1)
        guard let history, let overlapping = try history.overlapping(name: name, startMs: dated.atMs, endMs: endMs) else { return }
        let earliest = max(overlapping.endMs ?? dated.wallNow, dated.atMs)
        throw .invalidInterval(
            "at_ms \(UTCTime.text(dated.atMs)) is before the end of '\(name)'s interval "
                + "\(UTCTime.text(overlapping.startMs)) to \(UTCTime.text(overlapping.endMs ?? dated.wallNow))"
                + (overlapping.id.isEmpty ? "" : " (\(overlapping.id))")
                + ": it may be from \(UTCTime.text(earliest)) to now, \(UTCTime.text(dated.wallNow))"
        )
    }

    /// Countdowns whose instants came: the batch is recorded as told in the outbox (one
    /// write, in the page cache), then told (their watchers written to in this turn), then
    /// saved later, off the queue (`StateStore.saveSoon`, the `DurableWriter`).
    ///
    /// Recorded before anyone hears of it: a daemon killed after telling finds the record at
    /// its next start and does not tell it again (`resumeCountdowns`). Not saved first:
    /// watchers and hooks hear of an expiry at its instant, not a disk flush later (a state
    /// file's two `fsync`s, or even one `fdatasync`, milliseconds each, and a burst of
    /// 10,000 is not held up by 10,000 writes). The record needs no flush: it lives in the
    /// page cache, which outlives the daemon, and after a reboot an instant on the boot
    /// clock means nothing. So only a crash of the machine before the file is written has
    /// the expiry told again at the next start, late, never lost.
    /// `startedInThePast`: the countdown was just started at an earlier instant (`at_ms`)
    /// that its target has already passed, which is why it is late.
    /// `wholly`: the phases of a cycle that are due are told now, up to `latePhasesACommand`
    /// (a command waits on it: it must act on the phase that runs now).
    private func expire(_ expiries: [(name: String, instant: Duration)], startedInThePast: Bool = false, wholly: Bool = false) {
        var expired: [String] = []
        var late: [(name: String, late: Duration)] = []
        var batch = EventBatch()
        // Late phases told beyond the expiries the scheduler handed over (`latePhasesATurn`).
        var continued = 0
        for (name, instant) in expiries {
            guard let useCase = registry.created(name) else { continue }
            var instant = instant
            // An automatic cycle's next phase may be due already (a suspend or a stop of the
            // daemon across several phase ends): each phase that ended is told, in order, at
            // its own instant, `latePhasesATurn` beyond the scheduler's batch in one turn at
            // most; the rest continue in a later turn (the scheduler holds the next instant).
            // The first expiry of each is always told: the scheduler handed it over.
            while true {
                let before = useCase.state.current
                // `expire` refuses nothing, and changes nothing before the instant (which has come:
                // one clock). The watchers hear of it after `tell` below, in this turn.
                guard let after = try? perform(.expire, on: useCase), after != before else { break }
                let now = before.reading(at: clock.instant())
                let lateness = max(now - instant, .zero)
                if lateness >= .seconds(1) { late.append((name, lateness)) }
                if let event = record(name, from: before, to: after, late: lateness, saving: .afterTelling) { batch.events.append(event) }
                batch.expiries.append(ToldExpiry(name: name, instant: before.expiry ?? instant))
                if expired.last != name { expired.append(name) }
                // An automatic cycle: the next phase from the instant this one expired. Its
                // interval ends there, in the history before anyone hears of the change.
                guard after.cycle?.auto == true, let expiredAt = before.expiry,
                    let advanced = try? perform(.advance, on: useCase), advanced != after
                else { break }
                if let event = record(
                    name, from: after, to: advanced, late: lateness, saving: .afterTelling, endedAt: expiredAt
                ) {
                    batch.events.append(event)
                }
                guard let next = advanced.expiry, next <= advanced.reading(at: clock.instant()),
                    continued < (wholly ? Self.latePhasesACommand : Self.latePhasesATurn)
                else { break }
                continued += 1
                instant = next
            }
        }
        logLate(late, startedInThePast: startedInThePast)
        if !batch.isEmpty { tell(batch) }
        // The watchers hear of it now, in this turn (at an instant, on the serving loop's
        // thread, `LoopTimer`): the use cases would deliver it in a later turn of the queue,
        // a hand-off to another thread that a watcher waits for, at every instant.
        for name in expired { registry.deliverToWatchersNow(name) }
        // The phases' lines, written before telling, flushed after (`HistoryFlush`).
        history?.flushSoon()
        storage.saveSoon(expired)
    }

    /// How many phases of automatic cycles one turn of the queue tells beyond the
    /// scheduler's batch, when several of a cycle ended while nobody could tell them: the
    /// scheduler holds the next one's instant (already past), so the rest follow in the
    /// next turns, clients served between.
    static let latePhasesATurn = 64
    /// How many late phases a command tells before it acts (`expireIfDue`): a few seconds
    /// of appends at most, well within the watchdog. A cycle further behind (a second-long
    /// cycle across a long suspend) refuses the command until the turns have caught it up.
    static let latePhasesACommand = 4_096

    /// A line for each of a few late expiries; a burst (thousands of countdowns after a
    /// suspend or a restart) in one line for each batch the scheduler hands over: a line each
    /// would run into journald's rate limit for this service, which would then drop the
    /// daemon's other lines (hook failures, errors) too. Lateness in whole seconds: only a
    /// second or more is logged, and "2400123ms" helps nobody.
    private func logLate(_ late: [(name: String, late: Duration)], startedInThePast: Bool) {
        let namedAtMost = 3
        let why = startedInThePast
            ? "(it was started in the past, at_ms); told now"
            : "(stopwatchd was not running, the system was suspended, or stopwatchd was busy); told now"
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
    /// after the instant must not swallow the expiry. A cycle several phases behind (a
    /// catch-up after a suspend, told 64 phases a turn) catches up wholly first.
    private func expireIfDue(_ name: String, _ useCase: StopWatchUseCase, _ call: VarlinkCall) throws(VarlinkError) {
        let current = useCase.state.current
        guard let instant = current.expiry, instant <= current.reading(at: clock.instant()) else { return }
        expire([(name, instant)], wholly: true)
        // Still behind: acting on a phase long over would record it as lasting until now.
        let caughtUp = useCase.state.current
        if caughtUp.cycle?.auto == true, let due = caughtUp.expiry, due <= caughtUp.reading(at: clock.instant()) {
            throw .invalidTransition(Stopwatch(name: name, snapshot: caughtUp, at: clock.instant()), method: call.memberName)
        }
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
    /// `ended`: for a stop dated in the past, when.
    private func record(
        _ name: String,
        from before: StopWatchSnapshot,
        to after: StopWatchSnapshot,
        late: Duration = .zero,
        saving order: SaveOrder = .beforeTelling,
        ended: DatedTransition? = nil,
        endedAt: Duration? = nil
    ) -> StopwatchEvent? {
        if before.endsInterval(goingTo: after) {
            // A stop in the past: where it paused, on its own clock, is where the interval ends.
            // An automatic phase change: where the phase expired, `endedAt` on its own clock.
            let endedID = registry.intervalID(of: name)
            // A phase's line is flushed after it is told (`HistoryFlush.afterTelling`): its
            // watchers hear of it at its instant, not a disk flush later; a power loss before
            // the flush loses nothing, since the state file it follows from makes it again.
            let endMs = recordInterval(
                name, before, ended: ended.map { ($0, after.pausedAt) }, endedAt: endedAt, flush: endedAt == nil ? .now : .afterTelling
            )
            registry.setIntervalID(nil, of: name)
            // An automatic phase change: the next phase's id follows from this one's (a
            // restart's replay makes it again), and its interval begins where this one ended,
            // to the millisecond.
            if endedAt != nil, after.state.isCounting, let endedID, let position = after.cycle {
                let nextID = IntervalIdentity.following(endedID, phase: position.phase, round: position.round)
                registry.setIntervalID(nextID, of: name)
                if let endMs { phaseStartMs[nextID] = endMs }
            }
        }
        // An interval begins (a start, a toggle, a countdown, a resume): its id from now on,
        // saved with it, shown by History while it counts and written at its end.
        if !after.state.isCounting {
            registry.setIntervalID(nil, of: name)
        } else if registry.intervalID(of: name) == nil {
            registry.setIntervalID(IntervalIdentity.random(), of: name)
        }
        if order == .beforeTelling { storage.save(name, after) }
        noteCounting(name, after)
        if before.state.isCounting != after.state.isCounting || before.endsInterval(goingTo: after) { openIntervals?.changed() }
        changed()
        expiries.update(name, after)
        guard after != before else { return nil }
        let update = WatchUpdate(
            stopwatch: Stopwatch(name: name, snapshot: after, at: clock.instant()), event: WatchEvent(from: before, to: after)
        )
        let endedNote = after.state.isCounting ? nil : before.note
        return StopwatchEvent(update: update, late: late, endedNote: endedNote)
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

    /// `get` of a plain call, its reply's bytes written straight from the stopwatch; nil for
    /// a name that is not valid, whose error `get` answers.
    private func plainGet(_ given: String?) -> [UInt8]? {
        let name = given ?? StopwatchName.defaultName
        guard StopwatchName.isValid(name) else { return nil }
        let snapshot = registry.created(name)?.state.current ?? .stopped
        return Stopwatch(name: name, snapshot: snapshot, at: clock.instant()).getReplyMessage
    }

    private func list() -> VarlinkAnswer {
        .reply(["stopwatches": .array(listed().map(\.json))])
    }

    /// Every stopwatch, by name, as `List` replies with them.
    private func listed() -> [Stopwatch] {
        let now = clock.instant()
        return registry.createdStopwatches.map { Stopwatch(name: $0.name, snapshot: $0.useCase.state.current, at: now) }
    }

    private func remove(_ call: VarlinkCall) throws(VarlinkError) -> VarlinkAnswer {
        // Required here: removing "default" by leaving the name out would be too easy.
        guard case .string(let name)? = call.parameters["name"] else { throw .invalidParameter("name") }
        guard StopwatchName.isValid(name) else { throw .invalidName(name) }
        // A typo is told, as for Stop (`command`).
        guard let useCase = registry.created(name) else { throw .noSuchStopwatch(name) }
        try expireIfDue(name, useCase, call)
        let before = useCase.state.current
        if before.state.isCounting {
            try history?.ensureWritable(endingAt: wallClock.nowMilliseconds())
            recordInterval(name, before)
        }
        // On disk before anyone hears of it, watchers included.
        storage.save(name, nil)
        registry.remove(name)
        counting[StopwatchKey(name)] = nil
        if before.state.isCounting { openIntervals?.changed() }
        changed()
        expiries.update(name, nil)
        let removed = WatchUpdate(stopwatch: Stopwatch(name: name, snapshot: .stopped, at: clock.instant()), event: .removed)
        tell(EventBatch(events: [StopwatchEvent(update: removed, endedNote: before.note)]))
        return .reply([:])
    }

    private func watch(_ call: VarlinkCall) throws(VarlinkError) -> VarlinkAnswer {
        let name = try name(in: call)
        guard call.more else { throw .expectedMore }
        return .stream(StopwatchWatch(name: name, context: watches))
    }

    /// Appends the counting interval `snapshot` is in to the history, ending now, or for a
    /// stop dated in the past, `ended.at.ago` before now at wall-clock `ended.at.atMs`, where
    /// its own clock read `ended.reading` (nil: `ago` before now), with the id it has had
    /// since it began (`StopwatchRegistry`'s table). `endedAt`: it ended at that reading of
    /// its own clock (a cycle's phase that expired then), the time since taken as that long
    /// before now on the wall clock too. The clocks are read once, together: every number of
    /// the interval is from that one reading, so the phase after it begins where it ends.
    @discardableResult
    private func recordInterval(
        _ name: String, _ snapshot: StopWatchSnapshot, ended: (at: DatedTransition, reading: Duration?)? = nil, endedAt: Duration? = nil,
        flush: HistoryFlush = .now
    ) -> Int64? {
        guard let history else { return nil }
        var endMs = ended?.at.atMs ?? wallClock.nowMilliseconds()
        let instant = clock.instant()
        var endedAgo: Duration?
        if ended == nil, let endedAt {
            let ago = max(snapshot.reading(at: instant) - endedAt, .zero)
            endMs -= ago.milliseconds
            endedAgo = ago
        }
        guard var interval = openInterval(
            name, snapshot, wallNow: endMs, dated: ended?.at, endReading: ended?.reading ?? endedAt, endedAgo: endedAgo, at: instant
        ) else { return nil }
        // A phase that began at an automatic change: where the one before ended, unless the
        // clocks disagree by more than rounding (a wall clock step since).
        if let startMs = phaseStartMs.removeValue(forKey: interval.id), abs(startMs - interval.startMs) <= 5 {
            interval.startMs = startMs
        }
        // Written before a crash, found at the restart (`resumeCountdowns`): not twice.
        if !phasesEndedInHistory.isEmpty, phasesEndedInHistory.remove(interval.id) != nil { return endMs }
        history.append(Interval(
            id: interval.id, name: name, startMs: interval.startMs, endMs: max(endMs, interval.startMs), elapsedMs: interval.elapsedMs,
            note: interval.note, phase: interval.phase
        ), flush: flush)
        return endMs
    }

    /// The interval `snapshot` counts in, as of `wallNow` (for a dated stop, `dated`'s instant,
    /// when its own clock read `endReading`, by default that long before now on it), without an end; nil
    /// when it does not count. Its start lies as far before `wallNow` as the boot clock has
    /// run since it began: the time counted for one that counts sleep, more for one that left
    /// sleep out.
    private func openInterval(
        _ name: String, _ snapshot: StopWatchSnapshot, wallNow: Int64, dated: DatedTransition? = nil, endReading: Duration? = nil,
        endedAgo: Duration? = nil, at read: StopWatchInstant? = nil
    ) -> Interval? {
        Self.openInterval(
            name, snapshot, id: registry.intervalID(of: name), wallNow: wallNow, dated: dated, endReading: endReading, endedAgo: endedAgo,
            at: read ?? clock.instant()
        )
    }

    /// `openInterval` from values alone (its id given), as `open.json`'s writer makes it on
    /// its own queue.
    private static func openInterval(
        _ name: String, _ snapshot: StopWatchSnapshot, id: String?, wallNow: Int64, dated: DatedTransition? = nil,
        endReading: Duration? = nil, endedAgo: Duration? = nil, at instant: StopWatchInstant
    ) -> Interval? {
        let ago = endedAgo ?? dated.map { $0.ago(at: instant.boot) } ?? .zero
        let end = endReading ?? snapshot.reading(at: instant) - ago
        guard snapshot.state.isCounting, let elapsed = snapshot.intervalElapsed(at: end) else {
            return nil
        }
        // An end dated to a wall-clock millisecond: whole milliseconds, the nearest, as the
        // paused stopwatch has them (a start dated 09:25 and a stop dated 12:30 are 3:05:00
        // apart, not 3:04:59.999, however the clocks' fractions fell at each command).
        func milliseconds(_ duration: Duration) -> Int64 {
            ago > .zero ? (duration + .microseconds(500)).nanoseconds / 1_000_000 : duration.milliseconds
        }
        let elapsedMs = milliseconds(elapsed)
        let spanMs = snapshot.intervalStartBoot.map { milliseconds(max(instant.boot - ago - $0, elapsed)) } ?? elapsedMs
        let (start, overflow) = wallNow.subtractingReportingOverflow(spanMs)
        return Interval(
            id: id ?? "", name: name, startMs: overflow ? 0 : max(start, 0), endMs: nil, elapsedMs: elapsedMs,
            note: snapshot.note, phase: snapshot.cycle?.current.label
        )
    }

    /// Writes the counting intervals to `open.json` for the other devices now (at the
    /// daemon's start, after `resumeCountdowns`, which made `counting` from every stopwatch;
    /// after a start or stop of one, `openIntervals` writes it soon).
    func publishOpenIntervals() {
        openIntervals?.writeAtStart()
        // Written when this returns, as before any client is served.
        history?.openIntervalsFile.wait()
    }

    /// Hands `open.json`'s writer what counts now: the counting stopwatches' snapshots and
    /// interval ids, read here (the registry is this queue's), made into intervals, sorted
    /// and written on the writer's queue (`OpenIntervalsFile`).
    private func writeOpenIntervals() {
        guard let history else { return }
        let wallNow = wallClock.nowMilliseconds()
        let instant = clock.instant()
        let counting = self.counting
        history.writeOpenIntervals(writtenMs: wallNow) {
            counting.values
                .compactMap { Self.openInterval($0.name, $0.snapshot, id: $0.intervalID, wallNow: wallNow, at: instant) }
                .sorted { ($0.startMs, $0.id) < ($1.startMs, $1.id) }
        }
    }

    /// A counting stopwatch as `open.json` lists it (`counting`).
    struct CountingStopwatch: Sendable {
        let name: String
        let snapshot: StopWatchSnapshot
        let intervalID: String
    }

    /// Makes `counting` from every stopwatch: at start, once the restore has given them
    /// their interval ids and the catch-up (`resumeCountdowns`) their phases.
    private func countAllAgain() {
        // Made at its size in one go: grown entry by entry, 10,000 cost READY 15 ms of
        // rehashing.
        let entries = registry.createdInAnyOrder.compactMap { countingEntry($0.name, $0.useCase.state.current) }
        var made = [StopwatchKey: CountingStopwatch](minimumCapacity: entries.count)
        for entry in entries { made[StopwatchKey(entry.name)] = entry }
        counting = made
    }

    /// Keeps `counting` up to date with stopwatch `name` now `snapshot`: listed while it
    /// counts with an interval id, which it is given as it begins (`record`).
    private func noteCounting(_ name: String, _ snapshot: StopWatchSnapshot) {
        let key = StopwatchKey(name)
        if let entry = countingEntry(name, snapshot) {
            counting[key] = entry
        } else if counting[key] != nil {
            counting[key] = nil
        }
    }

    /// Stopwatch `name` as `counting` lists it, if it counts with an interval id.
    private func countingEntry(_ name: String, _ snapshot: StopWatchSnapshot) -> CountingStopwatch? {
        guard snapshot.state.isCounting, let id = registry.intervalID(of: name), !id.isEmpty else { return nil }
        return CountingStopwatch(name: name, snapshot: snapshot, intervalID: id)
    }

    /// The counting intervals as of `wallNow`, by start (then id: the same order every time,
    /// so `open.json` is not written again for an order alone).
    private func openIntervals(wallNow: Int64) -> [Interval] {
        let instant = clock.instant()
        return registry.createdInAnyOrder
            .compactMap { openInterval($0.name, $0.useCase.state.current, wallNow: wallNow, at: instant) }
            .sorted { ($0.startMs, $0.id) < ($1.startMs, $1.id) }
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
        switch call.parameters["device"] {
        case nil, .null?: break
        case .string(let device)?: query.device = device
        default: throw .invalidParameter("device")
        }
        guard let history else { throw .methodNotFound(call.method) }
        // Still counting: the newest, by when they began.
        let tail = history.unwritten + openIntervals(wallNow: wallClock.nowMilliseconds())
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

    /// A command's reply, the stopwatch as `Get`'s: written without its tree (a Lap on
    /// 10,000 laps spent most of its time building and freeing one).
    private func reply(_ name: String, _ snapshot: StopWatchSnapshot) -> VarlinkAnswer {
        .message(Stopwatch(name: name, snapshot: snapshot, at: clock.instant()).getReplyMessage)
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

    /// StartCycle's `phases`, `rounds` and `auto`, each in its range (SPEC §3: 1 to 16
    /// phases of 1 ms to 366 days, labels as names of at most 32 scalars, 1 to 1,000
    /// rounds); anything else is `InvalidParameter` naming it.
    private func cycle(in call: VarlinkCall) throws(VarlinkError) -> StopWatchCycle {
        guard case .array(let list)? = call.parameters["phases"], CyclePlan.phaseCount.contains(list.count) else {
            throw .invalidParameter("phases")
        }
        var phases: [StopWatchCycle.Phase] = []
        for item in list {
            guard case .object(let phase) = item, case .string(let label)? = phase["label"], CyclePlan.isValidLabel(label),
                case .int(let milliseconds)? = phase["target_ms"], let target = CountdownTarget.duration(milliseconds: milliseconds)
            else { throw .invalidParameter("phases") }
            phases.append(StopWatchCycle.Phase(label: label, target: target))
        }
        var rounds: Int?
        switch call.parameters["rounds"] {
        case nil, .null?: break
        case .int(let count)? where count >= Int64(CyclePlan.roundCount.lowerBound) && count <= Int64(CyclePlan.roundCount.upperBound):
            rounds = Int(count)
        default: throw .invalidParameter("rounds")
        }
        guard case .bool(let auto)? = call.parameters["auto"] else { throw .invalidParameter("auto") }
        guard let cycle = StopWatchCycle(phases: phases, rounds: rounds, auto: auto) else { throw .invalidParameter("phases") }
        return cycle
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
