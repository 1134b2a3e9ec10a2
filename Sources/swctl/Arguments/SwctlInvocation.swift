import LinuxSystem
import StopWatchCore
import StopwatchProtocol

/// A `swctl` command line, checked (SPEC §5).
package struct SwctlInvocation: Equatable, Sendable {
    package enum Command: String, CaseIterable, Sendable {
        case start, stop, toggle, reset, lap, status, list, remove, timer, wait, watch, log, report, bridge
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
    /// `--host [USER@]HOST`: the daemon there, through ssh; nil for a socket here.
    package var host: String?
    package var json = false
    package var format: WatchFormat = .plain
    /// `timer`'s request; nil for every other command.
    package var timer: TimerAction?
    /// `wait --for`; nil for the default (decided by the stopwatch's first state).
    package var waitFor: WaitCondition?
    /// `wait --timeout`.
    package var waitTimeout: Duration?
    /// `log`/`report --since`, `--until`: nil leaves that end of the history open.
    package var since: When?
    package var until: When?
    /// `report --by`.
    package var grouping: ReportGrouping = .name
    /// `log`/`report --csv`.
    package var csv = false

    package init(command: Command, name: String? = nil) {
        self.command = command
        self.name = name
    }

    package static let usage = """
        usage: swctl [--socket PATH | --user | --system | --host [USER@]HOST] [--json] COMMAND [NAME]

        commands:
          start [NAME]     start counting, or resume (creates NAME)
          stop [NAME]      pause
          toggle [NAME]    start when not counting, stop when counting
          reset [NAME]     back to zero (only when not counting)
          lap [NAME]       record a split time (only while counting)
          status [NAME]    show a stopwatch (a countdown: the time left, or +overtime)
          list             show all stopwatches
          remove NAME      delete a stopwatch
          timer [NAME] DURATION [--keep] | timer [NAME] --off
                           a countdown of DURATION from zero (250ms, 1s, 1.5s, 2m, 1h,
                           1h30m; 1ms to 366 days); --keep sets the target and counts on
                           (a reminder); --off makes it a plain stopwatch again
          wait [NAME] [--for expired|stop|change] [--timeout DURATION]
                           block until a countdown expires (the default for a countdown),
                           it stops, or anything changes (the default otherwise)
          watch [NAME] [--format plain|json|waybar|i3blocks|polybar|'TEMPLATE']
                           print each update; TEMPLATE uses {name} {state} {elapsed}
                           {elapsed_ms} {laps} {last_lap} {remaining} {target}
          log [NAME] [--since WHEN] [--until WHEN] [--csv]
                           the counting intervals (all stopwatches without NAME)
          report [--since WHEN] [--until WHEN] [--by name|day] [--csv]
                           time per name (longest first), or per day and name,
                           with totals; intervals are clipped to the range
          bridge           relay standard input to the daemon's socket and the socket to
                           standard output (for 'ssh HOST swctl bridge': --host, and
                           varlink clients that speak through a command)

        options:
          --socket PATH    the daemon's socket (default: $STOPWATCHD_SOCKET, else the
                           user daemon's if running, else the system daemon's)
          --user           the user daemon ($XDG_RUNTIME_DIR/stopwatchd/stopwatchd.sock)
          --system         the system daemon (/run/stopwatchd/stopwatchd.sock)
          --host [USER@]HOST
                           the daemon on HOST, through 'ssh -T -o BatchMode=yes -o
                           ServerAliveInterval=10 -o ServerAliveCountMax=3 -- HOST swctl
                           bridge' (default: $STOPWATCHD_HOST when no socket option is
                           given); $STOPWATCHD_SSH replaces 'ssh', split on whitespace
          --json           print the stopwatch as JSON (log: the intervals; report:
                           the totals)
          --since WHEN, --until WHEN
                           with log and report: from/until WHEN (default: all history);
                           WHEN is now, today, yesterday, monday … sunday (the latest,
                           00:00), Nd, Nh, Nm (ago), YYYY-MM-DD or YYYY-MM-DDTHH:MM (local)
          --by name|day    with report: totals per name (default) or per day and name
          --csv            with log and report: CSV with a header row
          --keep, --off    with timer: keep counting / clear the target
          --for EVENT      with wait: expired, stop or change
          --timeout DURATION
                           with wait: give up after DURATION (exit 124)
          -h, --help       show this help
          --version        show the version

        NAME defaults to "default". Elapsed time shows tenths in watch once updates come
        faster than once a second, and always when $STOPWATCHD_TICK is under a second.
        Exit status: 0 done, 1 refused by the daemon (wait: the stopwatch was removed),
        2 usage error, 69 no daemon reachable (or ssh failed), 70 protocol error,
        77 permission denied, 124 wait timed out.
        """

    /// Reads the arguments (without the program name). Options may come before or after
    /// the command.
    package static func parse(_ arguments: [String]) throws(UsageError) -> Action {
        var socket: SocketLocation.ClientChoice?
        var host: String?
        var json = false
        var format: WatchFormat?
        var keep = false
        var off = false
        var waitFor: WaitCondition?
        var waitTimeout: Duration?
        var since: When?
        var until: When?
        var grouping: ReportGrouping?
        var csv = false
        var words: [String] = []
        var reader = ArgumentReader(arguments)
        while let argument = reader.next() {
            let name = argument.name
            func value() throws(UsageError) -> String { try reader.value(of: argument) }
            func setSocket(_ choice: SocketLocation.ClientChoice) throws(UsageError) {
                guard socket == nil, host == nil else { throw UsageError("use only one of --socket, --user, --system and --host") }
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
            case "--host":
                let value = try value()
                try Self.checkHost(value, from: "--host")
                guard socket == nil, host == nil else { throw UsageError("use only one of --socket, --user, --system and --host") }
                host = value
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
            case "--keep": keep = true
            case "--off": off = true
            case "--for":
                let word = try value()
                guard let condition = WaitCondition(rawValue: word) else {
                    throw UsageError("--for takes expired, stop or change, not '\(word)'")
                }
                waitFor = condition
            case "--timeout":
                let text = try value()
                guard let timeout = DurationText.parse(text) else {
                    throw UsageError("--timeout takes a duration like 250ms, 1s, 1.5s, 2m or 1h, not '\(text)'")
                }
                waitTimeout = timeout
            case "--since", "--until":
                let text = try value()
                guard let when = When(text) else {
                    throw UsageError("\(name) takes \(When.forms); not '\(text)'")
                }
                if name == "--since" { since = when } else { until = when }
            case "--by":
                let word = try value()
                guard let value = ReportGrouping(rawValue: word) else {
                    throw UsageError("--by takes name or day, not '\(word)'")
                }
                grouping = value
            case "--csv": csv = true
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
        var names = words.dropFirst()
        if keep || off, command != .timer { throw UsageError("--keep and --off go with timer") }
        if waitFor != nil || waitTimeout != nil, command != .wait { throw UsageError("--for and --timeout go with wait") }
        // Not a `Set`: `Set<Command>`'s metadata and the search for its `Hashable` conformance
        // would be paid by every swctl at start (docs/PERFORMANCE.md).
        let isHistory = command == .log || command == .report
        if since != nil || until != nil || csv, !isHistory {
            throw UsageError("--since, --until and --csv go with log and report")
        }
        if grouping != nil, command != .report { throw UsageError("--by goes with report") }
        if csv, json { throw UsageError("use either --csv or --json, not both") }
        var timer: TimerAction?
        if command == .timer {
            timer = try timerAction(&names, keep: keep, off: off)
        }
        guard names.count <= 1 else { throw UsageError("\(command.rawValue) takes at most one name, got \(names.count)") }
        let name = names.first
        if let name, !StopwatchName.isValid(name) {
            throw UsageError(StopwatchName.invalidNameMessage(name))
        }
        switch command {
        case .list where name != nil: throw UsageError("list takes no name")
        case .report where name != nil: throw UsageError("report takes no name: it counts every stopwatch")
        case .remove where name == nil: throw UsageError("remove needs the NAME of the stopwatch to delete")
        case .bridge where name != nil: throw UsageError("bridge takes no name")
        case .bridge where host != nil:
            throw UsageError("bridge relays to a daemon on this machine; --host goes with the other commands")
        case .bridge where json: throw UsageError("bridge takes no --json: it relays varlink as it is")
        default: break
        }
        if format != nil, command != .watch { throw UsageError("--format goes with watch") }
        var invocation = SwctlInvocation(command: command, name: name)
        invocation.socket = socket ?? .automatic
        invocation.host = host
        invocation.json = json
        invocation.format = format ?? (json ? .json : .plain)
        invocation.timer = timer
        invocation.waitFor = waitFor
        invocation.waitTimeout = waitTimeout
        invocation.since = since
        invocation.until = until
        invocation.grouping = grouping ?? .name
        invocation.csv = csv
        return .run(invocation)
    }

    /// The host whose daemon this invocation drives through ssh: `--host`, else
    /// `$STOPWATCHD_HOST` unless a socket option was given (`--socket`, `--user`, `--system`
    /// beat the variable, and the variable beats `$STOPWATCHD_SOCKET`); nil for a socket
    /// here. `bridge` always relays to a socket here. Throws for a variable that is not a
    /// host.
    package func remoteHost(environment: ProcessEnvironment) throws(UsageError) -> String? {
        guard command != .bridge else { return nil }
        if let host { return host }
        guard socket == .automatic, let variable = environment["STOPWATCHD_HOST"] else { return nil }
        try Self.checkHost(variable, from: "STOPWATCHD_HOST")
        return variable
    }

    /// The command that replaces `ssh`: `$STOPWATCHD_SSH` split on whitespace (no shell:
    /// no quotes, no expansions), else `ssh`.
    package static func sshCommand(environment: ProcessEnvironment) -> [String] {
        let words = (environment["STOPWATCHD_SSH"] ?? "").split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
        return words.isEmpty ? ["ssh"] : words.map(String.init)
    }

    /// A host for ssh: not empty, no whitespace or control characters, and not an option
    /// (`-oProxyCommand=…` would be one to ssh).
    private static func checkHost(_ host: String, from source: String) throws(UsageError) {
        guard !host.isEmpty, !host.hasPrefix("-"),
              !host.unicodeScalars.contains(where: { $0 == " " || StopwatchName.isControl($0) }) else {
            throw UsageError("\(source) takes [USER@]HOST, not '\(StopwatchName.printable(host))'")
        }
    }

    /// `timer`'s words after the command: `[NAME] DURATION`, or `[NAME]` with `--off`. One
    /// word is the duration (`swctl timer 25m`, the default stopwatch), two are NAME DURATION.
    /// Takes the duration off `words`, leaving the name.
    private static func timerAction(_ words: inout ArraySlice<String>, keep: Bool, off: Bool) throws(UsageError) -> TimerAction {
        if off {
            guard !keep else { throw UsageError("use either --keep (with a DURATION) or --off, not both") }
            guard words.count <= 1 else { throw UsageError("timer --off takes at most a NAME, no DURATION") }
            return .off
        }
        guard words.count <= 2 else { throw UsageError("timer takes a NAME and a DURATION, got \(words.count) words") }
        guard let text = words.popLast() else {
            throw UsageError("timer needs a DURATION, like 'swctl timer 25m' or 'swctl timer tea 4m'")
        }
        guard let duration = TimerDuration.parse(text) else {
            throw UsageError("'\(text)' is not a timer duration: \(TimerDuration.rule)")
        }
        return keep ? .keepCounting(duration) : .countdown(duration)
    }
}
