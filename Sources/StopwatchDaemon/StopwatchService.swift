import StopWatchCore
import StopwatchProtocol
import Varlink

/// Answers the calls of `io.stopwatchd` and `org.varlink.service` (SPEC §3).
///
/// Not thread-safe: it belongs to the server's queue, with the registry.
final class StopwatchService {
    let registry: StopwatchRegistry
    /// Shared by every connection's watch: one encoding per update.
    let watchReplies = WatchReplyCache()
    private let clock: any StopWatchClock
    /// Laps a stopwatch may hold until reset: a file and a reply stay bounded.
    private let maximumLaps: Int
    /// Called after a change to stopwatch `name` and before the reply goes out: where the
    /// change is made durable.
    var onChange: (_ name: String) -> Void = { _ in }

    init(registry: StopwatchRegistry, clock: any StopWatchClock, maximumLaps: Int) {
        self.registry = registry
        self.clock = clock
        self.maximumLaps = maximumLaps
    }

    func handle(_ call: VarlinkCall) -> CallOutcome {
        switch call.interface {
        case StopwatchdInterface.name: stopwatchd(call)
        case OrgVarlinkServiceInterface.name: service(call)
        default: .failure(.interfaceNotFound(call.interface))
        }
    }

    // MARK: org.varlink.service

    private func service(_ call: VarlinkCall) -> CallOutcome {
        switch call.memberName {
        case "GetInfo":
            return .reply([
                "vendor": .string(Version.vendor),
                "product": .string("stopwatchd"),
                "version": .string(Version.number),
                "url": .string(Version.url),
                "interfaces": .array([.string(OrgVarlinkServiceInterface.name), .string(StopwatchdInterface.name)]),
            ])
        case "GetInterfaceDescription":
            guard case .string(let interface)? = call.parameters["interface"] else {
                return .failure(.invalidParameter("interface"))
            }
            switch interface {
            case StopwatchdInterface.name: return .reply(["description": .string(StopwatchdInterface.description)])
            case OrgVarlinkServiceInterface.name: return .reply(["description": .string(OrgVarlinkServiceInterface.description)])
            default: return .failure(.interfaceNotFound(interface))
            }
        default:
            return .failure(.methodNotFound(call.method))
        }
    }

    // MARK: io.stopwatchd

    private func stopwatchd(_ call: VarlinkCall) -> CallOutcome {
        let method = call.memberName
        do throws(VarlinkError) {
            switch method {
            case "Start": return try command(.start, call, creating: true)
            case "Toggle": return try command(.toggle, call, creating: true)
            case "Stop": return try command(.stop, call, creating: false)
            case "Reset": return try command(.reset, call, creating: false)
            case "Lap": return try command(.lap, call, creating: false)
            case "Get":
                let name = try name(in: call)
                let snapshot = registry.created(name)?.state.current ?? .stopped
                return reply(name, snapshot)
            case "List":
                let now = clock.now()
                let stopwatches = registry.createdStopwatches.map {
                    Stopwatch(name: $0.name, snapshot: $0.useCase.state.current, at: now).json
                }
                return .reply(["stopwatches": .array(stopwatches)])
            case "Remove":
                guard case .string(let name)? = call.parameters["name"] else { throw .invalidParameter("name") }
                guard StopwatchName.isValid(name) else { throw .invalidName(name) }
                if registry.remove(name) { onChange(name) }
                return .reply([:])
            case "Watch":
                let name = try name(in: call)
                guard call.more else { throw .expectedMore }
                return .watch(name: name)
            default:
                throw .methodNotFound(call.method)
            }
        } catch {
            return .failure(error)
        }
    }

    private func command(_ command: StopWatchCommand, _ call: VarlinkCall, creating: Bool) throws(VarlinkError) -> CallOutcome {
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
        if after != before || !existed { onChange(name) }
        return reply(name, after)
    }

    private func reply(_ name: String, _ snapshot: StopWatchSnapshot) -> CallOutcome {
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
