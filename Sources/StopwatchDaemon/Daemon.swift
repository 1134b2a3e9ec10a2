import Dispatch
import Glibc
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
import UserDatabase
import Varlink

/// The daemon put together: socket, stopwatches, server, signals.
package enum Daemon {
    /// Starts serving and never returns; SIGTERM, SIGINT or SIGHUP ends the process with status 0.
    /// Throws only when it cannot start.
    ///
    /// Built in stages, in this order, each from what the ones before made: the socket and
    /// what is checked before it is bound (`Entrance`), the queue and what every part tells
    /// (`Core`), the state on disk (`Storage`), the stopwatches' service and its server
    /// (`Service`), then signals, the watchdog and serving (`Lifecycle`).
    package static func run(options: DaemonOptions, environment: ProcessEnvironment) throws(DaemonStartError) -> Never {
        let logger = Logger(minimumLevel: options.logLevel, journald: environment["JOURNAL_STREAM"] != nil)
        // First, while fds 3 and up are still only what systemd passed.
        let activated = ListeningSocket.takePassed(environment, serving: explicitSocketPath(options: options, environment: environment) == nil)
        Signals.ignore(SIGPIPE)
        if environment["MALLOC_ARENA_MAX"] == nil { Memory.limitArenas(to: 2) }

        let entrance = try Entrance(options: options, environment: environment, activated: activated, logger: logger)
        let core = Core(options: options, environment: environment)
        let storage = try Storage(options: options, environment: environment, core: core, listener: entrance.listener, logger: logger)
        let service = try Service(options: options, core: core, storage: storage, entrance: entrance, logger: logger)
        let lifecycle = try Lifecycle(
            environment: environment, core: core, storage: storage, service: service, listener: entrance.listener, logger: logger
        )
        logger.info("stopwatchd \(Version.number) listening on \(entrance.listener.name), tick \(DurationText.string(options.tick))")
        withExtendedLifetime((entrance, core, storage, service, lifecycle)) {
            CurrentProcess.parkForever()
        }
    }

    /// The socket clients connect to, and what may refuse the start before it is bound.
    private struct Entrance {
        let allowedGroup: gid_t?
        let hookDirectory: HookDirectory
        let listener: ListeningSocket
        /// `--max-connections`, or fewer when the open file limit cannot serve as many.
        let maximumConnections: Int

        init(options: DaemonOptions, environment: ProcessEnvironment, activated: ListeningSocket?, logger: Logger) throws(DaemonStartError) {
            if let name = options.allowGroup {
                guard let gid = try? Users.groupID(named: name) else {
                    throw DaemonStartError("--allow-group: there is no group named '\(name)'; create it (groupadd \(name), or systemd-sysusers with the package's sysusers.d entry) or name another")
                }
                allowedGroup = gid
            } else {
                allowedGroup = nil
            }
            // Before the socket: a hook directory refused leaves nothing behind.
            hookDirectory = try HookRunner.openDirectory(options: options, environment: environment, logger: logger)
            listener = try listeningSocket(options: options, environment: environment, group: allowedGroup, activated: activated)
            // Every client costs a descriptor: keep some for the daemon's own files.
            let openFileLimit = ResourceLimits.raiseOpenFileLimit()
            let reservedDescriptors = 64
            maximumConnections = min(options.maximumConnections, max(openFileLimit - reservedDescriptors, 1))
            if maximumConnections < options.maximumConnections {
                logger.warning("only \(maximumConnections) connections at once: the open file limit is \(openFileLimit)")
            }
        }
    }

    /// The server's queue, on which everything below runs, the clocks, the stopwatches in
    /// memory, and what every part tells of a change: the status line, and the idle exit.
    private struct Core {
        let queue: DispatchQueue
        let clock: BootClock
        let registry: StopwatchRegistry
        let status: StatusReporter
        /// Told by every part that can keep the daemon busy; nil without --exit-idle.
        let idleExit: IdleExit?

        init(options: DaemonOptions, environment: ProcessEnvironment) {
            let queue = DispatchQueue(label: "stopwatchd.server")
            let clock = BootClock()
            let timers = DispatchTickTimerFactory()
            let registry = StopwatchRegistry(limit: options.maximumStopwatches, queue: queue) { snapshot in
                StopWatchUseCase(snapshot, clock: clock, timers: timers, tick: options.tick)
            }
            self.queue = queue
            self.clock = clock
            self.registry = registry
            status = StatusReporter(notifier: SystemdNotifier(environment), queue: queue) {
                "\(registry.createdCount) stopwatch\(registry.createdCount == 1 ? "" : "es"), \(registry.countingCount) counting, \(registry.watcherCount) watched"
            }
            idleExit = options.exitIdle.map { IdleExit(period: $0, queue: queue, clock: clock, timers: DispatchTickTimerFactory()) }
        }
    }

    /// The state directory: the stopwatches restored from it, the history and the hooks'
    /// outbox in it. A restore that fails removes the socket the entrance bound.
    private struct Storage {
        let store: StateStore
        let clockSteps: WallClockStepWatch?
        let history: HistoryJournal
        let outbox: EventOutbox

        init(options: DaemonOptions, environment: ProcessEnvironment, core: Core, listener: ListeningSocket, logger: Logger) throws(DaemonStartError) {
            let (queue, registry, status, idleExit) = (core.queue, core.registry, core.status, core.idleExit)
            let stateDirectory = StateLocation.path(
                option: options.stateDirectory, environment: environment, isRoot: Users.effectiveUserID == 0
            )
            // The flushes after telling, off the serving queue (history lines, state files).
            let writer = DurableWriter()
            let store = StateStore(
                directory: stateDirectory,
                maximumLaps: options.maximumLaps,
                logger: logger,
                queue: queue,
                currentSnapshot: { registry.created($0)?.state.current },
                currentIntervalID: { registry.intervalID(of: $0) },
                problemChanged: {
                    status.savingProblemChanged($0)
                    idleExit?.activityMayHaveChanged()
                },
                writer: writer
            )
            self.store = store
            // Watched from before the restore, so a step while it runs is seen too.
            clockSteps = Self.watchClockSteps(queue: queue, registry: registry, store: store, logger: logger)
            // On the queue, as every use of the store and registry; its error comes back as a value
            // since `sync` does not carry a typed throw.
            let restored = queue.sync { () -> Result<Void, DaemonStartError> in
                Result { () throws(DaemonStartError) in try restore(from: store, into: registry, logger: logger) }
            }
            do {
                try restored.get()
            } catch {
                // Bound already: leave no socket file that nobody answers on.
                listener.removeOwnedSocket()
                throw error
            }
            let folder: HistoryFolder
            do throws(DaemonStartError) {
                folder = try Daemon.historyFolder(options: options, store: store, stateDirectory: stateDirectory, logger: logger)
                do throws(HistoryLayout.Refusal) {
                    try folder.prepareAtStart()
                } catch {
                    throw DaemonStartError(error.description)
                }
                folder.ownFolderGuard?.forgetIfUnchecked()
            } catch {
                listener.removeOwnedSocket()
                throw error
            }
            let history = HistoryJournal(
                openDirectory: { () throws(Errno) in try folder.openDeviceFolder() },
                openDirectoryToRead: { () throws(Errno) in try folder.openDeviceFolderToRead() },
                logger: logger,
                queue: queue,
                wallClock: SystemWallClock(),
                keepDays: options.historyDays,
                deviceID: folder.layout.deviceID,
                deviceName: folder.layout.deviceName,
                openFolder: { () throws(Errno) in try folder.openFolderToRead() },
                deviceLimit: options.historyDevices,
                ownFolderGuard: folder.ownFolderGuard,
                writer: writer,
                problemChanged: {
                    status.historyProblemChanged($0)
                    idleExit?.activityMayHaveChanged()
                }
            )
            queue.sync {
                // No state file ahead of the history's lines (`HistoryFlush.afterTelling`).
                store.beforeSaving = { history.flushWritten() }
                store.beforeHandingOver = { history.handOverFlush() }
                history.start()
                // After the repair (a torn line cut): what is there now is this daemon's.
                history.recordOwnFolder()
                if let problem = folder.startProblem, history.directory == nil { history.startedUnwritable(problem) }
                if let left = folder.monthsLeftAtTop { history.folderProblem = left }
            }
            self.history = history
            // Once the state directory is open and locked (the restore did it): runs an earlier
            // daemon left waiting start now, late.
            let outbox = EventOutbox(
                directory: store.openOutboxDirectory(),
                backlog: options.hookBacklog,
                lineLimit: StopwatchFileReader.maximumFileSize(maximumLaps: options.maximumLaps) + 4096,
                logger: logger,
                recordingQueue: queue
            )
            queue.sync { store.whenAllSaved = { outbox.expiriesSaved() } }
            self.outbox = outbox
        }

        /// A counting stopwatch's file keeps its origin on the wall clock, for after a reboot:
        /// written again after a step, the step is neither added nor lost then.
        private static func watchClockSteps(
            queue: DispatchQueue,
            registry: StopwatchRegistry,
            store: StateStore,
            logger: Logger
        ) -> WallClockStepWatch? {
            do {
                return try WallClockStepWatch(queue: queue) {
                    let counting = registry.createdStopwatches.filter { $0.useCase.state.current.state.isCounting }
                    for (name, useCase) in counting { store.saveWhole(name, useCase.state.current) }
                    logger.info("the wall clock was set; \(counting.count) counting stopwatch\(counting.count == 1 ? "" : "es") written again against it")
                }
            } catch {
                logger.warning("cannot watch for wall clock steps (\(error)); a counting stopwatch may gain or lose a step across a reboot")
                return nil
            }
        }
    }
    /// The stopwatches' service, the hooks it wakes, and the server that answers clients
    /// with it (not serving yet).
    private struct Service {
        let hooks: HookRunner
        let stopwatches: StopwatchService
        let server: VarlinkServer

        init(options: DaemonOptions, core: Core, storage: Storage, entrance: Entrance, logger: Logger) throws(DaemonStartError) {
            let (status, idleExit, outbox) = (core.status, core.idleExit, storage.outbox)
            // Made first: the service's expiry timers are made in it (`LoopTimerFactory`), and
            // it serves the clients once the server starts.
            let loop: ServingLoop
            do throws(Errno) {
                loop = try ServingLoop(queue: core.queue, logger: logger)
            } catch {
                entrance.listener.removeOwnedSocket()
                throw DaemonStartError("cannot wait for clients on \(entrance.listener.name): \(error)")
            }
            // STATUS= updates wait in the loop too, not on a dispatch timer.
            core.queue.sync { status.useTimers(LoopTimerFactory(loop: loop, logger: logger), now: core.clock.now) }
            let hooks = HookRunner.start(
                directory: entrance.hookDirectory, options: options, outbox: outbox, socketPath: entrance.listener.path, logger: logger
            )
            let service = VarlinkService(info: VarlinkService.Info(
                vendor: Version.vendor, product: "stopwatchd", version: Version.number, url: Version.url
            ))
            let stopwatches = StopwatchService(
                registry: core.registry,
                storage: storage.store,
                clock: core.clock,
                expiryTimers: LoopTimerFactory(loop: loop, logger: logger),
                awakeExpiryTimers: LoopTimerFactory(loop: loop, logger: logger, clock: .monotonic),
                queue: core.queue,
                maximumLaps: options.maximumLaps,
                maximumPendingEvents: options.maximumPendingEvents,
                logger: logger,
                changed: {
                    status.changed()
                    // Countdowns' expiries change with the stopwatches.
                    idleExit?.activityMayHaveChanged()
                },
                tell: { batch in
                    // Written before anyone hears of it; an event's runs only while a hook
                    // directory exists (read again when they start).
                    let withRuns = !batch.events.isEmpty && hooks.directoryExists
                    outbox.record(batch, withRuns: withRuns)
                    if withRuns { hooks.wake() }
                },
                history: storage.history,
                historyMemory: HistoryMemory(limit: options.historyMemory)
            )
            service.register(stopwatches.interface)
            self.hooks = hooks
            self.stopwatches = stopwatches
            server = VarlinkServer(
                listener: entrance.listener.descriptor,
                queue: core.queue,
                loop: loop,
                service: service,
                policy: PeerPolicy(daemonUID: Users.effectiveUserID, allowedGroup: entrance.allowedGroup),
                limits: ConnectionLimits(
                    maximumMessageSize: options.maximumMessageSize,
                    messageTimeout: options.messageTimeout,
                    writeTimeout: options.writeTimeout,
                    idleTimeout: options.idleTimeout
                ),
                maximumConnections: entrance.maximumConnections,
                maximumConnectionsPerUser: options.maximumConnectionsPerUser ?? max(entrance.maximumConnections / 4, 1),
                logger: logger
            )
        }
    }

    /// How it ends (signals, a serving failure, the idle exit), the watchdog, and serving
    /// begun: READY=1 once clients may come. A start that fails removes the socket.
    private struct Lifecycle {
        let signalSources: [any DispatchSourceSignal]
        let watchdog: (any DispatchSourceTimer)?

        init(
            environment: ProcessEnvironment,
            core: Core,
            storage: Storage,
            service: Service,
            listener: ListeningSocket,
            logger: Logger
        ) throws(DaemonStartError) {
            let (queue, status, idleExit) = (core.queue, core.status, core.idleExit)
            let (store, history, outbox) = (storage.store, storage.history, storage.outbox)
            let (server, hooks, stopwatches) = (service.server, service.hooks, service.stopwatches)
            let openIntervals = queue.sync { stopwatches.openIntervals }
            // On the queue: no client is served, and nothing changes, once it begins.
            let stopAndExit: @Sendable (CInt, String?) -> Never = { exitStatus, note in
                status.send(["STOPPING=1"], note: note)
                server.stop()
                store.saveBeforeExit()
                outbox.flushBeforeExit()
                // What counts now, if a change waits for its window (`OpenIntervalsSchedule`).
                openIntervals?.flush()
                history.writeBeforeExit()
                listener.removeOwnedSocket()
                CurrentProcess.exit(exitStatus)
            }
            signalSources = handleTerminationSignals(on: queue) { signal in
                logger.info("received \(Signals.name(of: signal)), stopping")
                stopAndExit(0, nil)
            }
            watchdog = startWatchdog(environment, on: queue)
            let startFailure: Errno? = queue.sync {
                do throws(Errno) {
                    try server.start { failure in
                        // EX_SOFTWARE: a failure, so that systemd starts it again.
                        logger.error("\(failure); stopping")
                        stopAndExit(70, nil)
                    }
                } catch {
                    return error
                }
                // A countdown that expired while the daemon was down is due at once: its expiry is
                // told in the queue's next turn, with how late it is.
                stopwatches.resumeCountdowns(told: outbox.restoredExpiries)
                // What counts here, for the other devices' History: rebuilt at every start.
                stopwatches.publishOpenIntervals()
                // Those it recorded are saved in later turns; the store says when all are
                // (`whenAllSaved`), or at once when none waits.
                if store.isAllSaved { outbox.expiriesSaved() }
                if let idleExit {
                    startIdleExit(idleExit, server: server, hooks: hooks, stopwatches: stopwatches, store: store, history: history, logger: logger) {
                        stopAndExit(0, $0)
                    }
                }
                // Listening and restored: clients may come.
                status.send(["READY=1"])
                return nil
            }
            if let startFailure {
                listener.removeOwnedSocket()
                throw DaemonStartError("cannot wait for clients on \(listener.name): \(startFailure)")
            }
        }
    }

    /// On the queue, once serving: wires what keeps the daemon busy to `idleExit`, and starts
    /// it. Busy: a client connected (a watcher is one), a hook running, waiting or not yet
    /// read, a countdown still to expire, or stopwatches or history intervals not written
    /// yet (exiting would lose them). A counting stopwatch is none of these: its time is on
    /// disk.
    private static func startIdleExit(
        _ idleExit: IdleExit,
        server: VarlinkServer,
        hooks: HookRunner,
        stopwatches: StopwatchService,
        store: StateStore,
        history: HistoryJournal,
        logger: Logger,
        stop: @escaping (_ note: String) -> Void
    ) {
        server.connectionsChanged = { idleExit.activityMayHaveChanged() }
        hooks.whenIdle { idleExit.activityMayHaveChangedElsewhere() }
        idleExit.start(
            isBusy: {
                server.connectionCount > 0 || !hooks.isIdle || stopwatches.expiries.count > 0
                    || store.hasUnsavedChanges || !history.pending.isEmpty
            },
            exit: { idleFor in
                // The period, as --exit-idle says it; how long it really was is for debugging.
                logger.info("idle for \(DurationText.string(idleExit.period)): exiting; the socket starts stopwatchd again")
                logger.debug("idle for \(DurationText.string(idleFor)) by the monotonic clock")
                stop("exited after \(DurationText.string(idleExit.period)) idle; the socket starts it again")
            }
        )
    }

    /// Pets systemd's watchdog at half its interval, if it set one. The timer runs on the
    /// server's queue, so a wedged queue is what stops the petting.
    private static func startWatchdog(_ environment: ProcessEnvironment, on queue: DispatchQueue) -> (any DispatchSourceTimer)? {
        guard let interval = SystemdNotifier.watchdogInterval(environment), let notifier = SystemdNotifier(environment) else {
            return nil
        }
        let half = DispatchTimeInterval.nanoseconds(Int(interval.nanoseconds / 2))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + half, repeating: half, leeway: .nanoseconds(Int(interval.nanoseconds / 20)))
        timer.setEventHandler { notifier.notify(["WATCHDOG=1"]) }
        timer.activate()
        return timer
    }

    /// The history folder (`--history-dir`, or `history/` in the state directory) and this
    /// device's identity in it (SPEC §4 "History across devices").
    private static func historyFolder(
        options: DaemonOptions, store: StateStore, stateDirectory: String, logger: Logger
    ) throws(DaemonStartError) -> HistoryFolder {
        let host = DeviceIdentity.hostName()
        guard let deviceID = options.deviceID ?? DeviceIdentity.machineDerived() else {
            throw DaemonStartError("cannot read /etc/machine-id (32 hex digits) to derive this device's id for the history; give one with --device-id (32 hex digits, e.g. from systemd-id128 new)")
        }
        let layout = HistoryLayout(
            deviceID: deviceID, deviceName: options.deviceName ?? host, hostName: host, trust: .currentProcess, logger: logger
        )
        // In the state directory, which no sync tool shares: each machine keeps its own.
        let ownFolderGuard = OwnFolderGuard(stateDirectory: stateDirectory, logger: logger) { store.openStateDirectory() }
        guard let path = options.historyDirectory else {
            return HistoryFolder(
                layout: layout, path: stateDirectory + "/" + HistoryJournal.directoryName,
                openRoot: { () throws(Errno) in try store.openHistoryDirectory() },
                openRootToRead: { () throws(Errno) in try store.openHistoryDirectoryToRead() },
                ownFolderGuard: ownFolderGuard
            )
        }
        let trust = DirectoryTrust.currentProcess
        let open = { (creating: Bool) throws(Errno) -> DirectoryDescriptor in
            let directory = creating ? try DirectoryDescriptor.open(path, creatingWith: 0o700) : try DirectoryDescriptor.open(path)
            if trust.problem(with: try directory.status(), path: path) != nil {
                directory.close()
                throw Errno(EPERM)
            }
            return directory
        }
        // The months of a history in the state directory are not moved to another folder:
        // said, so that they are not silently left behind.
        let old = stateDirectory + "/" + HistoryJournal.directoryName
        if let directory = try? DirectoryDescriptor.open(old) {
            let months = (try? directory.entries().compactMap(HistoryMonth.init(fileName:)).sorted()) ?? []
            let devices = (try? directory.entries().filter(DeviceIdentity.isValid)) ?? []
            directory.close()
            if !months.isEmpty || !devices.isEmpty {
                let names = (months.map(\.fileName) + devices.map { $0 + "/" }).joined(separator: ", ")
                logger.warning("--history-dir \(path) is used; the history in \(old) (\(names)) is not read nor moved: to keep it, stop stopwatchd and move those files into \(path) (months into its device folder \(deviceID)/), then start it again")
            }
        }
        // Refused at start with the reason, rather than an EPERM later.
        if let status = try? DirectoryDescriptor.open(path).closeAfter({ (directory) throws(Errno) in try directory.status() }),
            let problem = trust.problem(with: status, path: path)
        {
            throw DaemonStartError("refusing the history folder: \(problem)")
        }
        return HistoryFolder(
            layout: layout, path: path,
            openRoot: { () throws(Errno) in try open(true) },
            openRootToRead: { () throws(Errno) in try open(false) },
            ownFolderGuard: ownFolderGuard
        )
    }

    private static func restore(from store: StateStore, into registry: StopwatchRegistry, logger: Logger) throws(DaemonStartError) {
        let start = ContinuousClock.now
        let restored = try store.load()
        var dropped: [String] = []
        var givenIDs: [String] = []
        let intervalIDs = store.takeRestoredIntervalIDs()
        for (name, snapshot) in restored {
            do {
                _ = try registry.create(name, from: snapshot)
                // A counting one's interval keeps its id; one from a file of an earlier
                // version (none kept, or a bad one) gets one now.
                if snapshot.state.isCounting {
                    if let id = intervalIDs[StopwatchKey(name)] {
                        registry.setIntervalID(id, of: name)
                    } else {
                        registry.setIntervalID(IntervalIdentity.random(), of: name)
                        givenIDs.append(name)
                    }
                }
            } catch {
                dropped.append(name)
            }
        }
        // Saved now, not at the stopwatch's next change: a restart before that would give
        // the interval History showed another id.
        store.saveSoon(givenIDs)
        if !dropped.isEmpty {
            logger.warning("over the limit of \(registry.limit) stopwatches: not loaded \(dropped.joined(separator: ", ")) (their files are kept)")
        }
        let counting = restored.count { $0.snapshot.state.isCounting }
        logger.info("restored \(restored.count - dropped.count) stopwatches (\(counting) counting) from \(store.directory) in \(DurationText.string(ContinuousClock.now - start))")
    }

    /// Refuses options that cannot work together with this environment, before anything is
    /// opened: `--exit-idle` without socket activation would exit for good.
    package static func checkUsage(_ options: DaemonOptions, environment: ProcessEnvironment) throws(UsageError) {
        guard options.exitIdle != nil, explicitSocketPath(options: options, environment: environment) != nil
            || !ListeningSocket.isPassed(environment)
        else { return }
        throw UsageError("--exit-idle is only for a daemon started by socket activation (a socket passed by systemd, with no --socket or $STOPWATCHD_SOCKET): without it, nothing would start stopwatchd again after it exits")
    }

    /// --socket > $STOPWATCHD_SOCKET: a path chosen over systemd's socket (SPEC §4).
    private static func explicitSocketPath(options: DaemonOptions, environment: ProcessEnvironment) -> String? {
        options.socketPath ?? environment["STOPWATCHD_SOCKET"]
    }

    private static func listeningSocket(
        options: DaemonOptions,
        environment: ProcessEnvironment,
        group: gid_t?,
        activated: ListeningSocket?
    ) throws(DaemonStartError) -> ListeningSocket {
        // --socket > $STOPWATCHD_SOCKET > systemd's socket > the default path (SPEC §4).
        if let path = explicitSocketPath(options: options, environment: environment) {
            return try ListeningSocket.bind(path: path, group: group)
        }
        if let activated {
            return activated
        }
        let path = SocketLocation.defaultDaemonPath(environment: environment, isRoot: Users.effectiveUserID == 0)
        return try ListeningSocket.bind(path: path, group: group)
    }

    /// Handles SIGTERM, SIGINT and SIGHUP (its terminal closed: nothing to reload) on `queue`
    /// instead of dying at once; SIGINT and SIGHUP stay ignored when they were ignored at
    /// start (`nohup`, a background job). Made outside any actor: a source made in top-level
    /// code would inherit the main actor and trap when it fires.
    private static func handleTerminationSignals(
        on queue: DispatchQueue,
        _ handler: @escaping @Sendable (CInt) -> Void
    ) -> [any DispatchSourceSignal] {
        let handled = [SIGTERM] + [SIGINT, SIGHUP].filter { !Signals.isIgnored($0) }
        return handled.map { signal in
            // The default action would kill the process before the source saw the signal.
            Signals.ignore(signal)
            let source = DispatchSource.makeSignalSource(signal: signal, queue: queue)
            source.setEventHandler { handler(signal) }
            source.activate()
            return source
        }
    }
}

/// Why the daemon could not start; the message says what to do.
package struct DaemonStartError: Error, Equatable, Sendable, CustomStringConvertible {
    package let message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
