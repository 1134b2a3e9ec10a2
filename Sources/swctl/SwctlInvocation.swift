import StopWatchCore
import StopwatchProtocol

/// A `swctl` command line, checked (SPEC §5).
package struct SwctlInvocation: Equatable, Sendable {
    package enum Command: String, CaseIterable, Sendable {
        case start, stop, toggle, reset, lap, status, list, remove, watch
    }

    package enum Action: Equatable, Sendable {
        case run(SwctlInvocation)
        case help
        case version
    }

    package var command: Command
    /// The stopwatch named on the command line; nil means the daemon's default.
    package var name: String?
    package var socket: SocketLocation.ClientChoice = .automatic
    package var json = false
    package var format: WatchFormat = .plain

    package init(command: Command, name: String? = nil) {
        self.command = command
        self.name = name
    }

    package static let usage = """
        usage: swctl [--socket PATH | --user | --system] [--json] COMMAND [NAME]

        commands:
          start [NAME]     start counting, or resume (creates NAME)
          stop [NAME]      pause
          toggle [NAME]    start when not counting, stop when counting
          reset [NAME]     back to zero (only when not counting)
          lap [NAME]       record a split time (only while counting)
          status [NAME]    show a stopwatch
          list             show all stopwatches
          remove NAME      delete a stopwatch
          watch [NAME] [--format plain|json|waybar|i3blocks|polybar|'TEMPLATE']
                           print each update; TEMPLATE uses {name} {state} {elapsed}
                           {elapsed_ms} {laps} {last_lap}

        options:
          --socket PATH    the daemon's socket (default: $STOPWATCHD_SOCKET, else the
                           user daemon's if running, else the system daemon's)
          --user           the user daemon ($XDG_RUNTIME_DIR/stopwatchd/stopwatchd.sock)
          --system         the system daemon (/run/stopwatchd/stopwatchd.sock)
          --json           print the stopwatch as JSON
          -h, --help       show this help
          --version        show the version

        NAME defaults to "default". Elapsed time shows tenths in watch once updates come
        faster than once a second, and always when $STOPWATCHD_TICK is under a second.
        Exit status: 0 done, 1 refused by the daemon, 2 usage error, 69 no daemon
        reachable, 70 protocol error, 77 permission denied.
        """

    /// Reads the arguments (without the program name). Options may come before or after
    /// the command.
    package static func parse(_ arguments: [String]) throws(UsageError) -> Action {
        var socket: SocketLocation.ClientChoice?
        var json = false
        var format: WatchFormat?
        var words: [String] = []
        var reader = ArgumentReader(arguments)
        while let argument = reader.next() {
            let name = argument.name
            func value() throws(UsageError) -> String { try reader.value(of: argument) }
            func setSocket(_ choice: SocketLocation.ClientChoice) throws(UsageError) {
                guard socket == nil else { throw UsageError("use only one of --socket, --user and --system") }
                socket = choice
            }
            switch name {
            case "-h", "--help": return .help
            case "--version": return .version
            case "--json": json = true
            case "--user": try setSocket(.user)
            case "--system": try setSocket(.system)
            case "--socket":
                let path = try value()
                guard !path.isEmpty else { throw UsageError("--socket needs a path") }
                try setSocket(.path(path))
            case "--format", "-f":
                do {
                    format = try WatchFormat(argument: try value())
                } catch let error as WatchFormatError {
                    throw UsageError(error.description)
                } catch let error as UsageError {
                    throw error
                } catch {
                    throw UsageError("\(error)")
                }
            case "--":
                words.append(contentsOf: reader.rest())
            default:
                guard !argument.raw.hasPrefix("-") || argument.raw == "-" else { throw UsageError("unknown option '\(argument.raw)'") }
                words.append(argument.raw)
            }
        }
        guard let commandWord = words.first else { throw UsageError("no command given") }
        guard let command = Command(rawValue: commandWord) else {
            throw UsageError("unknown command '\(commandWord)'; commands: \(Command.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let names = words.dropFirst()
        guard names.count <= 1 else { throw UsageError("\(command.rawValue) takes at most one name, got \(names.count)") }
        let name = names.first
        if let name, !StopwatchName.isValid(name) {
            throw UsageError(StopwatchName.invalidNameMessage(name))
        }
        switch command {
        case .list where name != nil: throw UsageError("list takes no name")
        case .remove where name == nil: throw UsageError("remove needs the NAME of the stopwatch to delete")
        default: break
        }
        if format != nil, command != .watch { throw UsageError("--format goes with watch") }
        var invocation = SwctlInvocation(command: command, name: name)
        invocation.socket = socket ?? .automatic
        invocation.json = json
        invocation.format = format ?? (json ? .json : .plain)
        return .run(invocation)
    }
}
