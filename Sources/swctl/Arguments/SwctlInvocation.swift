import LinuxSystem
import StopwatchProtocol

/// A `swctl` command line, checked (SPEC §5): the command, and the options any command
/// may take.
package struct SwctlInvocation: Equatable, Sendable {
    package enum Action: Equatable, Sendable {
        case run(SwctlInvocation)
        case help
        case version
    }

    package var command: Command
    /// `--socket PATH`, `--user`, `--system`, or automatic (none of them).
    package var socket: SocketLocation.ClientChoice
    /// `--host [USER@]HOST`: the daemon there, through ssh; nil for a socket here.
    package var host: String?
    /// `--json`: what a command prints, as JSON. A global option, as the synopsis shows it:
    /// every command may take it, those that print nothing (`remove`, `wait`) ignore it,
    /// `watch`, `log` and `report` carry it in their format, and only `bridge`, which
    /// prints nothing of its own, refuses it.
    package var json: Bool

    package init(_ command: Command, socket: SocketLocation.ClientChoice = .automatic, host: String? = nil, json: Bool = false) {
        self.command = command
        self.socket = socket
        self.host = host
        self.json = json
    }

    package static let usage = """
        usage: swctl [--socket PATH | --user | --system | --host [USER@]HOST] [--json] COMMAND [NAME]

        commands:
          start [NAME] [--at WHEN] [--note TEXT]
                           start counting, or resume (creates NAME); --at: it began
                           then (09:05, 10m); --note: what the interval is for
          stop [NAME] [--at WHEN]
                           pause; --at: it stopped then (17:30), the time since taken off
          toggle [NAME] [--at WHEN] [--note TEXT]
                           start when not counting, stop when counting
          reset [NAME]     back to zero (only when not counting)
          lap [NAME]       record a split time (only while counting)
          status [NAME]    show a stopwatch (a countdown: the time left, or +overtime)
          list             show all stopwatches
          remove NAME      delete a stopwatch
          timer [NAME] DURATION [--keep] | timer [NAME] --off
                           a countdown of DURATION from zero (250ms, 1.5s, 2m, 1h30m,
                           2d, 1d12h; 1ms to 366 days), clearing any laps; --keep sets
                           the target and counts on (a reminder); --off makes it a
                           plain stopwatch again
          cycle [NAME] DURATION[:LABEL]... [--rounds N] [--manual]
                           countdowns one after another (1 to 16 phases; labels 1, 2,
                           … when none is given), each phase starting when the last
                           expires (--manual: at next), --rounds times (1 to 1000;
                           default: without end); NAME is the first word when it is
                           not a duration
          pomodoro [NAME] [--rounds N] [--manual]
                           cycle 25m:focus 5m:break 25m:focus 5m:break 25m:focus
                           5m:break 25m:focus 15m:long-break
          next [NAME]      end a cycle's phase now and start the next one
          snooze [NAME] [DURATION]
                           an expired countdown counts on and expires again DURATION
                           from now (default 5m; 1s to 24h)
          restart [NAME]   the same countdown from zero, now (a cycle: its first phase)
          skip-sleep [NAME] [--off]
                           count only time awake, not time in suspend (a lid closed on
                           a running stopwatch); --off counts it again (the default)
          wait [NAME] [--for expired|stop|change|phase] [--timeout DURATION]
                           block until it is done: a countdown expires (the default for
                           a countdown), a stopwatch stops (the default otherwise; at
                           once if it is not counting), anything changes, or a cycle's
                           next phase begins (the default for a cycle; at once if it
                           has ended)
          watch [NAME] [--format plain|json|waybar|i3blocks|polybar|'TEMPLATE']
                           print each update; TEMPLATE uses {name} {state} {elapsed}
                           {elapsed_ms} {laps} {last_lap} {remaining} {target} {note}
                           {phase} {round}
          log [NAME] [--since WHEN] [--until WHEN] [--device DEVICE] [--csv]
                           the counting intervals (all stopwatches without NAME), in
                           the order they ended, those still counting last; each
                           ended one numbered @N as amend and delete take it (@1 the
                           latest of all, with or without NAME and --until), with its
                           id's first 8 digits, its cycle phase, its note and, when
                           more than one device has history, its device
          report [--since WHEN] [--until WHEN] [--by name|day|device|phase]
                 [--device DEVICE] [--csv]
                           time per name (longest first), or per day, device or cycle
                           phase and name, with totals; intervals are clipped to the
                           range
          track NAME FROM TO [--note TEXT]
                           add an interval of NAME from FROM to TO (WHENs) to the history
          amend INTERVAL [--name NAME] [--start WHEN] [--end WHEN] [--note TEXT]
                           correct an ended interval: what is given changes
                           (--note "" removes its note)
          delete INTERVAL  remove an ended interval from the history
          undo             take back the latest track, amend or delete (again: the one
                           before it)
          devices          the devices whose history the daemon reads (itself, and
                           those a sync tool brought): name, id, intervals, latest
                           end, last change of its folder
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
                           00:00), Nd, Nh, Nm (ago), HH:MM (the latest such time, today
                           or yesterday), YYYY-MM-DD or YYYY-MM-DDTHH:MM (local)
          --at WHEN        with start, stop and toggle: it happened then, not now
          --note TEXT      with start, toggle, track and amend: the interval's note
                           (1 to 1024 characters, one line)
          --name NAME, --start WHEN, --end WHEN
                           with amend: the interval's new name, start, end
          --by name|day|device|phase
                           with report: totals per name (default), or per day, device
                           or cycle phase (- for intervals of no phase) and name
          --device DEVICE  with log and report: only the intervals of DEVICE (its
                           name, id, or the id's first 8 digits, as devices lists)
          --csv            with log and report: CSV with a header row
          --keep, --off    with timer: keep counting / clear the target; --off with
                           skip-sleep: count time in suspend again
          --rounds N       with cycle and pomodoro: run the phases N times (1 to 1000)
          --manual         with cycle and pomodoro: each phase runs on in overtime
                           until next
          --for EVENT      with wait: expired, stop, change or phase
          --timeout DURATION
                           with wait: give up after DURATION (exit 124)
          -h, --help       show this help
          --version        show the version

        INTERVAL is an id as log shows it (6 to 16 hex digits, unique) or @N, the Nth
        latest ended interval of all (@1 the latest). NAME defaults to "default".
        Elapsed time shows tenths in watch once updates come faster than once a second,
        and always when $STOPWATCHD_TICK is under a second.
        Exit status: 0 done, 1 refused by the daemon (no such stopwatch, reset while
        counting, a time out of range, no such interval, nothing to undo, …; wait: the
        stopwatch was removed, or never created), 2 usage error, 69 no daemon reachable
        (or ssh failed), 70 protocol error, 77 permission denied, 124 wait timed out.
        """

    /// A usage error for the first argument that is not valid UTF-8 (`arguments`: as the
    /// kernel gave them, without the program name), nil when all are. `CommandLine.arguments`
    /// would have replaced its bad bytes with U+FFFD, so that a note or a name would reach the
    /// daemon, and the history, other than as typed.
    package static func checkEncoding(_ arguments: [UnsafeBufferPointer<UInt8>]) -> UsageError? {
        for (index, bytes) in arguments.enumerated() where String(validating: bytes, as: UTF8.self) == nil {
            return UsageError("argument \(index + 1) is not valid UTF-8; names and notes are text in UTF-8")
        }
        return nil
    }

    /// Reads the arguments (without the program name). Options may come before or after
    /// the command.
    package static func parse(_ arguments: [String]) throws(UsageError) -> Action {
        var options = CommandLineOptions()
        var words: [String] = []
        var reader = ArgumentReader(arguments)
        while let argument = reader.next() {
            let name = argument.name
            func value() throws(UsageError) -> String { try reader.value(of: argument) }
            func setSocket(_ choice: SocketLocation.ClientChoice) throws(UsageError) {
                guard options.socket == nil, options.host == nil else { throw UsageError("use only one of --socket, --user, --system and --host") }
                options.socket = choice
            }
            switch name {
            case "-h", "--help": return .help
            case "--version": return .version
            case "--json": options.json = true
            case "--user": try setSocket(.user)
            case "--system": try setSocket(.system)
            case "--socket":
                let path = try value()
                guard !path.isEmpty else { throw UsageError("--socket needs a path") }
                try setSocket(.path(path))
            case "--host":
                let value = try value()
                try Self.checkHost(value, from: "--host")
                guard options.socket == nil, options.host == nil else { throw UsageError("use only one of --socket, --user, --system and --host") }
                options.host = value
            case "--format", "-f":
                do {
                    options.format = try WatchFormat(argument: try value())
                } catch let error as WatchFormatError {
                    throw UsageError(error.description)
                } catch let error as UsageError {
                    throw error
                } catch {
                    throw UsageError("\(error)")
                }
            case "--keep": options.keep = true
            case "--manual": options.manual = true
            case "--rounds":
                let text = try value()
                guard let rounds = Int(text), CyclePlan.roundCount.contains(rounds) else {
                    throw UsageError("--rounds takes a number \(CyclePlan.roundRule), not '\(StopwatchName.printable(text))'")
                }
                options.rounds = rounds
            case "--off": options.off = true
            case "--for":
                let word = try value()
                guard let condition = WaitCondition(rawValue: word) else {
                    throw UsageError("--for takes expired, stop, change or phase, not '\(word)'")
                }
                options.waitFor = condition
            case "--timeout":
                let text = try value()
                guard let timeout = DurationText.parse(text) else {
                    throw UsageError("--timeout takes a duration like \(DurationText.forms), not '\(text)'")
                }
                options.waitTimeout = timeout
            case "--since", "--until":
                let text = try value()
                guard let when = When(text) else {
                    throw UsageError("\(name) takes \(When.forms); not '\(text)'")
                }
                if name == "--since" { options.since = when } else { options.until = when }
            case "--by":
                let word = try value()
                guard let value = ReportGrouping(rawValue: word) else {
                    throw UsageError("--by takes name, day, device or phase, not '\(word)'")
                }
                options.grouping = value
            case "--csv": options.csv = true
            case "--device":
                let text = try value()
                guard !text.isEmpty, !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
                    throw UsageError("--device takes a device's name or id, as 'swctl devices' lists them")
                }
                options.device = text
            case "--at", "--start", "--end":
                let text = try value()
                guard let when = When(text) else {
                    throw UsageError("\(name) takes \(When.forms); not '\(StopwatchName.printable(text))'")
                }
                switch name {
                case "--at": options.at = when
                case "--start": options.start = when
                default: options.end = when
                }
            case "--note":
                let text = try value()
                // Empty: amend's way to remove a note (refused for the others in `check`).
                guard text.isEmpty || IntervalNote.isValid(text) else { throw UsageError("--note takes \(IntervalNote.rule)") }
                options.note = text
            case "--name":
                let text = try value()
                guard StopwatchName.isValid(text) else { throw UsageError(StopwatchName.invalidNameMessage(text)) }
                options.newName = text
            case "--":
                words.append(contentsOf: reader.rest())
            default:
                // `timer egg -1m` reads as an option; said as the duration it was meant to be
                // (`cycle -5m:break`, `snooze -5m` too).
                // (A switch, not a dictionary: no hashing paid by every swctl at start.)
                let durationTaker: String? = switch words.first {
                case "timer": "a timer"
                case "cycle": "a phase"
                case "snooze": "a snooze"
                default: nil
                }
                let meant = String(argument.raw.dropFirst().prefix { $0 != ":" })
                if let durationTaker, argument.raw.hasPrefix("-"), DurationText.parse(meant) != nil {
                    throw UsageError("'\(argument.raw)' is not a duration: \(durationTaker) needs a positive one, such as \(meant)")
                }
                guard !argument.raw.hasPrefix("-") || argument.raw == "-" else { throw UsageError("unknown option '\(argument.raw)'") }
                words.append(argument.raw)
            }
        }
        guard let commandWord = words.first else { throw UsageError("no command given") }
        guard let word = Command.Word(rawValue: commandWord) else {
            throw UsageError("unknown command '\(commandWord)'; commands: \(Command.Word.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let command = try Command(word, words: words.dropFirst(), options: options)
        return .run(SwctlInvocation(command, socket: options.socket ?? .automatic, host: options.host, json: options.json))
    }
}
