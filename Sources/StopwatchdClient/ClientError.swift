import StopwatchProtocol
import Varlink

/// Why a call to the daemon did not succeed, with the exit status `swctl` gives it
/// (SPEC §5) and a one-line message that says what to do (`description`).
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No daemon answers at `path`.
    case unreachable(path: String, reason: String)
    /// The daemon at `path` accepted the connection, then closed or reset it before it had
    /// answered (it stopped, or it ended this connection without a word).
    case connectionClosed(path: String, reason: String)
    /// The socket or the daemon refused this user.
    case permissionDenied(path: String)
    /// The daemon sent something that is not varlink, or closed mid-call.
    case protocolViolation(String)
    /// The command that was to reach a daemon elsewhere (`ssh HOST swctl bridge`) could not
    /// be started, ended before answering, or did not answer in time; `reason` is its last
    /// line on standard error (ssh's own message) when it said something.
    case bridgeFailed(command: String, reason: String)
    /// The daemon answered the call with an error: its varlink name (such as
    /// `io.stopwatchd.InvalidTransition`), and what it means for the user.
    case refused(errorName: String, explanation: String)
    /// The daemon is of an earlier release than this client and would ignore or cannot do
    /// what `feature` (as `swctl` spells it: `--at`, `--note`, `@N`) asks; nothing was sent
    /// that changes anything.
    case daemonTooOld(feature: String)

    /// The exit status `swctl` gives this error: 69 unreachable (here or through a bridge,
    /// or gone in mid-answer), 77 permission denied, 70 a protocol error, 1 a command the
    /// daemon refused.
    ///
    /// A connection closed without a word is 69, as no daemon is (EX_UNAVAILABLE): the
    /// daemon stopped, restarted or ended the connection, and the call may work when made
    /// again. 70 (EX_SOFTWARE) stays for an exchange that broke the protocol, the daemon's
    /// `ProtocolError` included, which says why it ended the connection.
    public var exitStatus: Int32 {
        switch self {
        case .unreachable, .connectionClosed, .bridgeFailed: 69
        case .permissionDenied: 77
        case .protocolViolation, .daemonTooOld: 70
        case .refused(let errorName, _):
            switch errorName {
            case VarlinkError.permissionDenied.name: 77
            case _ where Self.protocolErrorNames.contains(errorName): 70
            default: 1
            }
        }
    }

    /// Errors that say the client spoke wrongly, not that the daemon refused the command.
    private static let protocolErrorNames: Set<String> = [
        "io.stopwatchd.ProtocolError", "org.varlink.service.MethodNotFound", "org.varlink.service.InterfaceNotFound",
        "org.varlink.service.InvalidParameter", "org.varlink.service.ExpectedMore",
    ]

    /// The daemon's refusal `error`, explained. The varlink error itself is not kept: this
    /// type is public, and varlink's types are not.
    package init(refusal error: VarlinkError) {
        self = .refused(errorName: error.name, explanation: Self.explain(error))
    }

    /// The error for a reply that carries `error`: a daemon at its connection limit is as good
    /// as unreachable for now (and a watcher should retry; `unreachable` makes that error),
    /// everything else a refusal.
    package static func reply(_ error: VarlinkError, unreachable: (String) -> ClientError) -> ClientError {
        error.isConnectionLimit ? unreachable("the daemon is at its connection limit") : ClientError(refusal: error)
    }

    public var description: String {
        switch self {
        case .unreachable(let path, let reason):
            return Self.unreachableMessage(path: path, reason: reason)
        case .connectionClosed(let path, let reason):
            return "the connection to stopwatchd at \(path) ended before the answer was complete (\(reason)); the daemon may have stopped or restarted: try again, and see its log if it goes on"
        case .bridgeFailed(let command, let reason):
            return "cannot reach stopwatchd through '\(command)': \(reason); check that the command works on its own (for ssh: 'ssh HOST' logs in without a prompt) and that swctl is on the PATH there"
        case .permissionDenied(let path):
            return "permission denied for \(path); join the group the daemon allows (e.g. 'stopwatch'), or use your own daemon with --user"
        case .protocolViolation(let reason):
            return "stopwatchd answered something unexpected (\(reason)); check that the socket belongs to stopwatchd"
        case .refused(_, let explanation):
            return explanation
        case .daemonTooOld(let feature):
            // Most often a daemon still running from before the upgrade of both.
            return "this stopwatchd is too old for \(feature) (restart it after the upgrade)"
        }
    }

    /// What `unreachable` says; `start`: how to start a daemon, which `swctl` run from a
    /// checkout's `.build` says otherwise (`stopwatchd` is not on the PATH there).
    package static func unreachableMessage(
        path: String, reason: String, start: String = "'stopwatchd' or 'systemctl --user start stopwatchd.socket'"
    ) -> String {
        "no stopwatchd at \(path) (\(reason)); start one with \(start), or pick another with --socket"
    }

    /// The methods of the latest release, which a daemon of an earlier one does not know.
    private static let newerMethods: Set<String> = [
        "io.stopwatchd.SetCountsSleep", "io.stopwatchd.Track", "io.stopwatchd.Amend", "io.stopwatchd.Delete", "io.stopwatchd.Undo",
        "io.stopwatchd.StartCycle", "io.stopwatchd.Next", "io.stopwatchd.Snooze", "io.stopwatchd.Restart",
    ]

    private static func explain(_ error: VarlinkError) -> String {
        let text: (String) -> String? = { key in
            if case .string(let value)? = error.parameters[key] { value } else { nil }
        }
        switch error.name {
        case "io.stopwatchd.InvalidTransition":
            let stopwatch = error.parameters["stopwatch"].flatMap { try? Stopwatch(json: $0) }
            let name = stopwatch?.name ?? "the stopwatch"
            // An automatic cycle past its phase's end, not its last: the daemon is still
            // telling the phases that ended while it could not (a long suspend of a short
            // cycle), and acts once it has.
            if let stopwatch, let cycle = stopwatch.cycle, cycle.auto, stopwatch.state == .counting, !stopwatch.hasFinishedCycle,
                let remaining = stopwatch.remainingMs, remaining < 0
            {
                return "'\(name)' is still catching up the phases that ended while stopwatchd was away; try again in a moment"
            }
            switch text("method") {
            case "Reset": return "cannot reset '\(name)' while it is counting; stop it first ('swctl stop \(name)')"
            case "Lap": return "cannot record a lap: '\(name)' is not counting; start it first ('swctl start \(name)')"
            case "Next" where stopwatch?.cycle != nil:
                return "'\(name)' is in the last phase of its last round: there is no next phase ('swctl restart \(name)' runs the cycle again)"
            case "Next": return "'\(name)' is not a cycle: next needs one (start one with 'swctl cycle')"
            case "Snooze" where stopwatch?.targetMs == nil:
                return "'\(name)' is not a countdown: snooze is for a countdown in overtime"
            case "Snooze" where stopwatch?.state != .counting:
                return "'\(name)' is not counting: snooze is for a countdown in overtime ('swctl start \(name)' resumes it)"
            case "Snooze": return "'\(name)' has not expired: snooze is for a countdown in overtime"
            case "Restart": return "'\(name)' is not a countdown or a cycle: restart needs one (start one with 'swctl timer' or 'swctl cycle')"
            case let method?: return "'\(name)' refused \(method) in its current state"
            case nil: return "'\(name)' refused the command in its current state"
            }
        case VarlinkError.noSuchStopwatchName:
            let name = text("name") ?? ""
            // A newcomer meets the default name first, in a bare `swctl stop`, never having named it.
            let starting = name == StopwatchName.defaultName ? "; 'swctl start' makes it" : ""
            return "there is no stopwatch '\(StopwatchName.printable(name))' (see 'swctl list')\(starting)"
        case "org.varlink.service.MethodNotFound" where newerMethods.contains(text("method") ?? ""):
            // A daemon of an earlier release than this client: said as such, not as a fault.
            let method = text("method")?.split(separator: ".").last.map(String.init) ?? ""
            return "this stopwatchd is too old for \(method); upgrade it"
        case VarlinkError.noSuchIntervalName:
            return "there is no interval '\(StopwatchName.printable(text("id") ?? ""))' (see 'swctl log')"
        case VarlinkError.invalidIntervalName:
            // The daemon's reason says the allowed range; printable, as it may quote a name.
            return StopwatchName.printable(text("reason") ?? "the daemon refused the interval")
        case VarlinkError.nothingToUndoName:
            return "nothing to undo: no track, amend or delete made here is left to take back"
        case "io.stopwatchd.InvalidName":
            return StopwatchName.invalidNameMessage(text("name") ?? "")
        case "io.stopwatchd.TooManyStopwatches":
            let limit = if case .int(let limit)? = error.parameters["limit"] { "\(limit)" } else { "its limit of" }
            return "the daemon already keeps \(limit) stopwatches; remove one first ('swctl remove NAME')"
        case "io.stopwatchd.ProtocolError":
            // The daemon's last word before it closes the connection; its reason says what
            // went wrong (a month of the history it cannot read, a message left unfinished).
            return "stopwatchd could not answer and closed the connection: \(text("reason") ?? "a protocol error")"
        case "io.stopwatchd.TooManyResults":
            return "the history asked for is too long for one reply; narrow it with --since and --until"
        case VarlinkError.permissionDenied.name:
            return "the daemon refused this user; join the group it allows (e.g. 'stopwatch'), or use your own daemon with --user"
        default:
            return "stopwatchd refused the call: \(error)"
        }
    }
}
