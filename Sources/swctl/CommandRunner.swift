import LinuxSystem
import StopwatchProtocol
import StopwatchdClient
import Varlink

/// Runs one `swctl` command against the daemon and prints what it says.
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
            Diagnostics.fail("swctl: \(error)", status: error.exitStatus)
        }
        CurrentProcess.exit(0)
    }

    private func perform() throws(ClientError) {
        let name = invocation.name
        switch invocation.command {
        case .start: show(try client.start(name))
        case .stop: show(try client.stop(name))
        case .toggle: show(try client.toggle(name))
        case .reset: show(try client.reset(name))
        case .lap: show(try client.lap(name))
        case .status: show(try client.get(name))
        case .list:
            let stopwatches = try client.list()
            if invocation.json {
                Output.line(JSONValue.array(stopwatches.map(\.json)).text)
            } else {
                StatusText.table(stopwatches, tenths: tenths).forEach(Output.line)
            }
        case .remove:
            try client.remove(name ?? StopwatchName.defaultName)
        case .timer:
            switch invocation.timer {
            case .countdown(let duration)?: show(try client.countdown(name, target: duration))
            case .keepCounting(let duration)?: show(try client.setTarget(name, target: duration))
            case .off?, nil: show(try client.setTarget(name, target: nil))
            }
        case .wait:
            Waiter(client: client, name: name, condition: invocation.waitFor, timeout: invocation.waitTimeout).run()
        case .watch:
            let first = client
            let locate = locateSocket
            var watcher = Watcher(
                client: { locate().map { StopwatchClient(socketPath: $0) } ?? first },
                name: name, format: invocation.format, tenths: tenths
            )
            watcher.run()
        case .log, .report:
            try HistoryPrinter(invocation: invocation, client: client).run()
        case .bridge:
            // main runs `Bridge` itself: it relays bytes, and makes no calls.
            break
        }
    }

    private func show(_ stopwatch: Stopwatch) {
        if invocation.json {
            Output.line(stopwatch.json.text)
        } else {
            StatusText.lines(for: stopwatch, tenths: tenths).forEach(Output.line)
        }
    }
}
