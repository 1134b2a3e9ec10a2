import Dispatch
import LinuxSystem

/// Runs the hooks for every event the service reports (SPEC §4, "Events and hooks").
///
/// The events wait in the `EventOutbox`, written there by the server's queue before anyone
/// hears of them (`wake` then says there is work). Everything else happens on the runner's
/// own serial queue: it takes the oldest events from the outbox while fewer than
/// `maximumRunning` runs wait in the pool (a few ahead, so that a slot that frees starts
/// the next run at once), reads the hook directory anew for each, and submits one run per
/// hook to the `HookQueue` (runs start in order, hooks in name order, up to
/// `maximumRunning` at once). Once an event's last hook has started, the outbox marks it
/// started: a stop or a crash before that runs its hooks at the next start. Each run is watched by a `HookProcess` on a
/// thread of its own (at most `maximumRunning` such threads), which hands its slot back to
/// the queue when it ends.
final class HookRunner: @unchecked Sendable {
    // @unchecked Sendable: `pool`, `failingToStart` and `directory` are used only on `queue`
    // (each method touching them says so, and is only reached through `queue.async`);
    // `activity` and `becameIdle` are under their locks; the outbox is thread-safe;
    // everything else is immutable and Sendable.

    struct Limits: Sendable {
        var timeout: Duration = .seconds(30)
        /// From SIGTERM to SIGKILL.
        var grace: Duration = .seconds(2)
        var maximumRunning = 4
        var output = HookOutput()
    }

    private struct Job {
        /// The outbox's number for the event.
        let run: UInt64
        let event: StopwatchEvent
        let hook: String
        /// The event's last hook: once it has started, all of the event's have.
        let isLast: Bool
    }

    /// Whether the queue is at it, and how many runs it has, for `isIdle`.
    private struct Activity {
        var pumpQueued = false
        var pumping = false
        /// Runs running or waiting in the pool, as of the queue's last change.
        var runs = 0
    }

    let outbox: EventOutbox
    private let directory: HookDirectory
    private let directoryPath: String
    private let limits: Limits
    private let logger: Logger
    /// The daemon's environment, read once, that each hook's starts from.
    private let environment: [String]
    /// The socket this daemon serves, told to hooks (`STOPWATCHD_SOCKET`); nil if unknown.
    private let socketPath: String?
    private let queue = DispatchQueue(label: "stopwatchd.hooks")
    private let activity = Locked(Activity())
    /// Only on `queue`.
    private var pool: HookQueue<Job>
    /// Hooks whose last start failed, said once (only on `queue`).
    private var failingToStart: Set<String> = []
    /// Called (on the runner's queue) each time it becomes idle: exit on idle waits for it.
    private let becameIdle = Locked<(@Sendable () -> Void)?>(nil)

    /// - Parameter outbox: where the events wait; one in memory only by default (tests).
    init(
        directory: HookDirectory, limits: Limits, logger: Logger, environment: [String], outbox: EventOutbox? = nil,
        socketPath: String? = nil
    ) {
        self.socketPath = socketPath
        self.directory = directory
        self.directoryPath = directory.path
        self.limits = limits
        self.logger = logger
        self.environment = environment
        self.outbox = outbox ?? EventOutbox(directory: nil, backlog: 100_000, lineLimit: 1 << 20, logger: logger)
        pool = HookQueue(maximumRunning: limits.maximumRunning)
    }

    /// The hook directory of `options` (or the default), opened now if it exists, and
    /// refused (the daemon does not start) if it is not to be trusted.
    static func openDirectory(options: DaemonOptions, environment: ProcessEnvironment, logger: Logger) throws(DaemonStartError) -> HookDirectory {
        let trust = DirectoryTrust.currentProcess
        let path = HookLocation.path(option: options.hookDirectory, environment: environment, isRoot: trust.userID == 0)
        let directory = HookDirectory(path: path, trust: trust, logger: logger)
        try directory.openAtStart()
        return directory
    }

    /// The daemon's runner, for `directory` (`openDirectory`), its events in `outbox`.
    /// `socketPath`: the socket the daemon serves, for its hooks.
    static func start(
        directory: HookDirectory, options: DaemonOptions, outbox: EventOutbox, socketPath: String?, logger: Logger
    ) -> HookRunner {
        var limits = Limits()
        limits.timeout = options.hookTimeout
        limits.maximumRunning = options.maximumHooksRunning
        let runner = HookRunner(
            directory: directory, limits: limits, logger: logger, environment: ProcessEnvironment.all, outbox: outbox,
            socketPath: socketPath
        )
        // Runs an earlier daemon left waiting.
        if outbox.hasRuns { runner.wake() }
        return runner
    }

    /// Whether the hook directory exists now (from any thread): an event's runs are kept
    /// only then. Cheap (one `lstat`), so that a user without hooks pays nothing more; a
    /// directory made later is read at the next event, as the SPEC says.
    var directoryExists: Bool {
        (try? FileSystem.kind(at: directoryPath)) != .missing
    }

    /// Records `event` in the outbox and runs its hooks later, elsewhere; returns at once,
    /// from any thread. (The daemon records a batch at a time, then calls `wake`.)
    func run(_ event: StopwatchEvent) {
        outbox.record(EventBatch(events: [event]), withRuns: true)
        wake()
    }

    /// From any thread: events wait in the outbox; their hooks are started as slots free.
    func wake() {
        let schedule = activity.withLock { activity in
            guard !activity.pumpQueued else { return false }
            activity.pumpQueued = true
            return true
        }
        if schedule { queue.async { self.pump() } }
    }

    /// Whether no event waits and no hook runs or waits (for exit on idle).
    var isIdle: Bool {
        activity.withLock { !$0.pumpQueued && !$0.pumping && $0.runs == 0 } && !outbox.hasRuns
    }

    /// `handler` is called, on the runner's own queue, each time `isIdle` becomes true
    /// (maybe more often): it is to hop to its own queue.
    func whenIdle(_ handler: @escaping @Sendable () -> Void) {
        becameIdle.withLock { $0 = handler }
    }

    /// On `queue`: takes events while a slot is free.
    private func pump() {
        activity.withLock { $0.pumpQueued = false; $0.pumping = true }
        takeEvents()
        settle()
    }

    /// On `queue`: a run ended; its slot goes to the next.
    private func runEnded() {
        activity.withLock { $0.pumping = true }
        if let next = pool.finished() { start(next) }
        takeEvents()
        settle()
    }

    /// On `queue`: takes the oldest events from the outbox while fewer than a pool's worth
    /// of runs wait, and submits one run per hook for each (read anew for each event).
    private func takeEvents() {
        while pool.waiting < pool.maximumRunning, let (number, event) = outbox.takeNext() {
            let hooks = directory.hooks()
            guard !hooks.isEmpty else {
                outbox.started(number)
                continue
            }
            for (index, hook) in hooks.enumerated() {
                if let job = pool.submit(Job(run: number, event: event, hook: hook, isLast: index == hooks.count - 1)) {
                    start(job)
                }
            }
        }
    }

    /// On `queue`: starts `job`, and the next when it cannot start (its slot is given
    /// back at once); marks an event started once its last hook is.
    private func start(_ job: Job) {
        var next: Job? = job
        while let job = next {
            next = nil
            if !spawn(job) { next = pool.finished() }
            if job.isLast { outbox.started(job.run) }
        }
    }

    /// On `queue`: records what the pool holds now, and tells exit on idle if it is idle.
    private func settle() {
        let runs = pool.running + pool.waiting
        let idle = activity.withLock { activity in
            activity.pumping = false
            activity.runs = runs
            return !activity.pumpQueued && runs == 0
        }
        guard idle, !outbox.hasRuns, let handler = becameIdle.withLock({ $0 }) else { return }
        handler()
    }

    /// On `queue`: starts `job`'s run and a thread to watch it; false if it did not start.
    private func spawn(_ job: Job) -> Bool {
        let label = "hook \(job.hook) (\(job.event.event.rawValue) of '\(job.event.name)')"
        guard let executable = directory.open(job.hook) else { return false }
        let process: HookProcess
        do {
            process = try HookProcess.spawn(
                label: label,
                name: job.hook,
                executable: executable,
                environment: HookEnvironment.environment(environment, for: job.event, socket: socketPath),
                input: HookEnvironment.standardInput(for: job.event)
            )
        } catch {
            // Once until it starts again: a storm of events must not make a storm of lines.
            if failingToStart.insert(job.hook).inserted {
                logger.warning("\(label): cannot start it: \(error) (not said again for this hook until it starts)")
            }
            return false
        }
        failingToStart.remove(job.hook)
        logger.debug("\(label) started, pid \(process.pid)")
        let limits = self.limits, logger = self.logger
        // A serial queue of its own: a thread for as long as the run lasts (the wait blocks
        // it), never the server's queue or this one.
        DispatchQueue(label: "stopwatchd.hook").async {
            process.supervise(timeout: limits.timeout, grace: limits.grace, output: limits.output, logger: logger)
            self.queue.async { self.runEnded() }
        }
        return true
    }
}
