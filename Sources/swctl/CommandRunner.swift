import LinuxSystem
import StopwatchProtocol
import StopwatchdClient
import Varlink

/// Runs one `swctl` command against the daemon and prints what it says (`bridge` relays
/// bytes to it instead).
struct CommandRunner {
    let invocation: SwctlInvocation
    let client: StopwatchClient
    /// Where the daemon is now: `watch` asks again before each reconnection (nil: keep to
    /// `client`, as through ssh, where each connection is a new ssh anyway).
    let locateSocket: () -> String?
    /// Whether to show tenths of a second (the daemon ticks faster than once a second).
    let tenths: Bool

    func run() -> Never {
        do {
            try perform()
        } catch {
            if case .refused(let errorName, _) = error, errorName == VarlinkError.noSuchStopwatchName, let name = namedStopwatch {
                // The one path that asks List: for a name close to the one not found.
                Diagnostics.fail(MissingStopwatch.message(name, listed: try? client.list().map(\.name)), status: error.exitStatus)
            }
            Diagnostics.fail("swctl: \(error.swctlMessage)", status: error.exitStatus)
        }
        CurrentProcess.exit(0)
    }

    /// The stopwatch a command that may get `NoSuchStopwatch` names (SPEC §3: those that
    /// create nothing), as the daemon has it.
    private var namedStopwatch: String? {
        switch invocation.command {
        case .stop(let name), .reset(let name), .lap(let name): name ?? StopwatchName.defaultName
        case .remove(let name): name
        default: nil
        }
    }

    private func perform() throws(ClientError) {
        switch invocation.command {
        case .start(let name): show(try client.start(name))
        case .stop(let name): show(try client.stop(name))
        case .toggle(let name): show(try client.toggle(name))
        case .reset(let name): show(try client.reset(name))
        case .lap(let name): show(try client.lap(name))
        case .status(let name): show(try client.get(name))
        case .list:
            let stopwatches = try client.list()
            if invocation.json {
                Output.line(JSONValue.array(stopwatches.map(\.json)).text)
            } else {
                StatusText.table(stopwatches, tenths: tenths).forEach(Output.line)
            }
        case .remove(let name):
            try client.remove(name)
        case .timer(let name, .countdown(let duration)):
            // Countdown clears the laps: the state before, asked with it, says how many.
            let (before, after) = try client.countdownAfterGet(name, target: duration)
            show(after, lapsCleared: before?.lapsMs.count ?? 0)
        case .timer(let name, .keepCounting(let duration)): show(try client.setTarget(name, target: duration))
        case .timer(let name, .off): show(try client.setTarget(name, target: nil))
        case .wait(let name, let condition, let timeout):
            Waiter(client: client, name: name, condition: condition, timeout: timeout).run()
        case .watch(let name, let format):
            let first = client
            let locate = locateSocket
            var watcher = Watcher(
                client: { locate().map { StopwatchClient(socketPath: $0) } ?? first },
                name: name, format: format, tenths: tenths
            )
            watcher.run()
        case .log(let name, let range, let format):
            try HistoryPrinter(client: client, range: range, format: format).log(name)
        case .report(let range, let grouping, let format):
            try HistoryPrinter(client: client, range: range, format: format).report(by: grouping)
        case .bridge:
            // Bytes both ways, and no calls, to the socket here: `bridge` takes no `--host`,
            // and `$STOPWATCHD_HOST` is not for it (`SwctlInvocation.remoteHost`).
            guard case .socket(let path) = client.endpoint else {
                Diagnostics.fail("swctl: bridge relays to a daemon on this machine", status: 2)
            }
            Bridge(path: path).run()
        }
    }

    /// `lapsCleared`: laps the command cleared, said after the summary (not in `--json`,
    /// which is the `Stopwatch` object alone).
    private func show(_ stopwatch: Stopwatch, lapsCleared: Int = 0) {
        if invocation.json {
            Output.line(stopwatch.json.text)
        } else {
            var lines = StatusText.lines(for: stopwatch, tenths: tenths)
            if let note = StatusText.lapsClearedNote(lapsCleared) { lines[0] += " " + note }
            lines.forEach(Output.line)
        }
    }
}
