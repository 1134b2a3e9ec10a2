import Dispatch
import LinuxSystem

/// Runs the hooks for every event the service reports (SPEC §4, "Events and hooks").
///
/// `run` is called on the server's queue and returns at once: it only puts the event in an
/// inbox (bounded like the queue of runs: past it the oldest event is dropped). Everything
/// else happens on the runner's own serial queue: the hook directory is read anew for each
/// event, one run per hook is submitted to the `HookQueue` (runs start in name order, up to
/// `maximumRunning` at once, up to `maximumWaiting` waiting), and each run is watched by a
/// `HookProcess` on a thread of its own (at most `maximumRunning` such threads), which
/// hands its slot back to the queue when it ends.
final class HookRunner: @unchecked Sendable {
    // @unchecked Sendable: `pool`, `failingToStart` and `directory` are used only on `queue` (each method
    // touching them says so, and is only reached through `queue.async`); `inbox` and
    // `becameIdle` are under their locks; everything else is immutable and Sendable.

    struct Limits: Sendable {
        var timeout: Duration = .seconds(30)
        /// From SIGTERM to SIGKILL.
        var grace: Duration = .seconds(2)
        var maximumRunning = 4
        var maximumWaiting = 256
        var output = HookOutput()
    }

    private struct Job {
        let event: StopwatchEvent
        let hook: String
    }

    /// Events not yet read for hooks, and whether the queue is at it.
    private struct Inbox {
        var events: [StopwatchEvent] = []
        var lost = 0
        var draining = false
        /// Runs running or waiting, as of the queue's last change: for `isIdle`.
        var runs = 0
    }

    private let directory: HookDirectory
    private let limits: Limits
    private let logger: Logger
    /// The daemon's environment, read once, that each hook's starts from.
    private let environment: [String]
    private let queue = DispatchQueue(label: "stopwatchd.hooks")
    private let inbox = Locked(Inbox())
    private let inboxLimit: Int
    /// Only on `queue`.
    private var pool: HookQueue<Job>
    /// Hooks whose last start failed, said once (only on `queue`).
    private var failingToStart: Set<String> = []
    /// Called (on the runner's queue) each time it becomes idle: exit on idle waits for it.
    private let becameIdle = Locked<(@Sendable () -> Void)?>(nil)

    init(directory: HookDirectory, limits: Limits, logger: Logger, environment: [String]) {
        self.directory = directory
        self.limits = limits
        self.logger = logger
        self.environment = environment
        self.inboxLimit = max(limits.maximumWaiting, 1)
        pool = HookQueue(maximumRunning: limits.maximumRunning, maximumWaiting: limits.maximumWaiting)
    }

    /// The daemon's runner: the hook directory of `options` (or the default), opened now if
    /// it exists, and refused (the daemon does not start) if it is not to be trusted.
    static func start(options: DaemonOptions, environment: ProcessEnvironment, logger: Logger) throws(DaemonStartError) -> HookRunner {
        let trust = DirectoryTrust.currentProcess
        let path = HookLocation.path(option: options.hookDirectory, environment: environment, isRoot: trust.userID == 0)
        let directory = HookDirectory(path: path, trust: trust, logger: logger)
        try directory.openAtStart()
        var limits = Limits()
        limits.timeout = options.hookTimeout
        limits.maximumRunning = options.maximumHooksRunning
        limits.maximumWaiting = options.maximumHooksWaiting
        return HookRunner(directory: directory, limits: limits, logger: logger, environment: ProcessEnvironment.all)
    }

    /// Runs the hooks for `event`, later, elsewhere: returns at once, from any thread.
    func run(_ event: StopwatchEvent) {
        let schedule = inbox.withLock { inbox in
            if inbox.events.count >= inboxLimit {
                inbox.events.removeFirst()
                inbox.lost += 1
            }
            inbox.events.append(event)
            guard !inbox.draining else { return false }
            inbox.draining = true
            return true
        }
        if schedule { queue.async { self.drain() } }
    }

    /// Whether no event waits to be read and no hook runs or waits (for exit on idle).
    var isIdle: Bool {
        inbox.withLock { Self.isIdle($0) }
    }

    private static func isIdle(_ inbox: Inbox) -> Bool {
        !inbox.draining && inbox.events.isEmpty && inbox.runs == 0
    }

    /// `handler` is called, on the runner's own queue, each time `isIdle` becomes true
    /// (maybe more often): it is to hop to its own queue.
    func whenIdle(_ handler: @escaping @Sendable () -> Void) {
        becameIdle.withLock { $0 = handler }
    }

    private func tellIfIdle(_ idle: Bool) {
        guard idle, let handler = becameIdle.withLock({ $0 }) else { return }
        handler()
    }

    /// On `queue`: reads the hooks for each event in the inbox until it is empty.
    private func drain() {
        while true {
            let (events, lost, idle) = inbox.withLock { inbox in
                defer { inbox.events.removeAll(); inbox.lost = 0 }
                if inbox.events.isEmpty, inbox.lost == 0 { inbox.draining = false }
                return (inbox.events, inbox.lost, Self.isIdle(inbox))
            }
            if events.isEmpty, lost == 0 {
                tellIfIdle(idle)
                return
            }
            perform(pool.lost(lost))
            for event in events {
                for hook in directory.hooks() {
                    perform(pool.submit(Job(event: event, hook: hook)))
                }
            }
        }
    }

    /// On `queue`: does what the pool said, and what it says next (a run that cannot start
    /// gives its slot back at once).
    private func perform(_ actions: [HookQueue<Job>.Action]) {
        var actions = actions[...]
        while let action = actions.popFirst() {
            switch action {
            case .start(let job):
                if !start(job) { actions += pool.finished() }
            case .startedDropping:
                logger.warning("hooks: \(pool.maximumRunning) running and \(pool.maximumWaiting) waiting; dropping the oldest waiting until the queue drains")
            case .dropped(let count):
                logger.warning("hooks: \(count) event\(count == 1 ? "" : "s") or run\(count == 1 ? "" : "s") dropped: more than \(pool.maximumWaiting) were waiting")
            }
        }
        let runs = pool.running + pool.waiting
        let idle = inbox.withLock { inbox in
            inbox.runs = runs
            return Self.isIdle(inbox)
        }
        tellIfIdle(idle)
    }

    /// On `queue`: starts `job`'s run and a thread to watch it; false if it did not start.
    private func start(_ job: Job) -> Bool {
        let label = "hook \(job.hook) (\(job.event.event.rawValue) of '\(job.event.name)')"
        guard let executable = directory.open(job.hook) else { return false }
        let process: HookProcess
        do {
            process = try HookProcess.spawn(
                label: label,
                name: job.hook,
                executable: executable,
                environment: HookEnvironment.environment(environment, for: job.event),
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
            self.queue.async { self.perform(self.pool.finished()) }
        }
        return true
    }
}
