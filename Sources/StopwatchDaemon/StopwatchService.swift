import StopWatchCore
import StopwatchProtocol
import Varlink

/// The methods of `io.stopwatchd` (SPEC §3), registered with a `VarlinkService`.
///
/// A command is applied, the snapshot it produced is saved, then the reply is made: in that
/// order, in `command`, so a client hears of a change only once it is on disk.
///
/// Not thread-safe: it belongs to the server's queue, with the registry.
final class StopwatchService {
    private let registry: StopwatchRegistry
    private let storage: any StopwatchStorage
    private let clock: any StopWatchClock
    /// Laps a stopwatch may hold until reset: a file and a reply stay bounded.
    private let maximumLaps: Int
    /// Called after each saved change, and when a watcher comes or goes (the status line
    /// counts both).
    private let changed: () -> Void
    /// Told of every event but ticks, after it is saved: the hooks.
    private let events: (StopwatchEvent) -> Void
    private let watches: StopwatchWatch.Context

    init(
        registry: StopwatchRegistry,
        storage: any StopwatchStorage,
        clock: any StopWatchClock,
        maximumLaps: Int,
        maximumPendingEvents: Int,
        logger: Logger,
        changed: @escaping () -> Void,
        events: @escaping (StopwatchEvent) -> Void = { _ in }
    ) {
        self.registry = registry
        self.storage = storage
        self.clock = clock
        self.maximumLaps = maximumLaps
        self.changed = changed
        self.events = events
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
            "Get": { call throws(VarlinkError) in try self.get(call) },
            "List": { _ in self.list() },
            "Remove": { call throws(VarlinkError) in try self.remove(call) },
            "Watch": { call throws(VarlinkError) in try self.watch(call) },
        ])
    }

    private func command(_ command: StopWatchCommand, _ call: VarlinkCall, creating: Bool) throws(VarlinkError) -> VarlinkAnswer {
        let name = try name(in: call)
        let existed = registry.created(name) != nil
        guard let useCase = creating ? try registry.create(name) : registry.created(name) else {
            // Never started: it reads as stopped, and stays uncreated.
            do {
                return reply(name, try StopWatchSnapshot.stopped.applying(command, at: clock.now()))
            } catch {
                throw .invalidTransition(Stopwatch(name: name, snapshot: error.snapshot, at: clock.now()), method: call.memberName)
            }
        }
        let before = useCase.state.current
        // Commands reach a stopwatch only from this queue, so the count cannot change before
        // the lap is taken.
        if command == .lap, before.state.isCounting, before.laps.count >= maximumLaps {
            throw .tooManyLaps(limit: maximumLaps)
        }
        let after: StopWatchSnapshot
        do {
            after = try useCase.dispatcher.perform(command)
        } catch let refusal as InvalidTransition {
            throw .invalidTransition(Stopwatch(name: name, snapshot: refusal.snapshot, at: clock.now()), method: call.memberName)
        } catch {
            // perform only throws the handler's refusals, or misuse from the handler's queue,
            // which the server never is on.
            preconditionFailure("unexpected error from a stopwatch: \(error)")
        }
        if after != before || !existed {
            storage.save(name, after)
            changed()
        }
        return reply(name, after)
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
        if registry.remove(name) {
            storage.save(name, nil)
            changed()
        }
        return .reply([:])
    }

    private func watch(_ call: VarlinkCall) throws(VarlinkError) -> VarlinkAnswer {
        let name = try name(in: call)
        guard call.more else { throw .expectedMore }
        return .stream(StopwatchWatch(name: name, context: watches))
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
}
