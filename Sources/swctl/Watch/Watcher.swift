import LinuxSystem
import StopwatchProtocol
import StopwatchdClient

/// `swctl watch`: prints each update in the chosen format until interrupted. On a terminal
/// it redraws one line; into a pipe it writes one line per update. When the daemon goes
/// away it says so once, in the same format, and reconnects with backoff.
struct Watcher {
    /// The client for each connection attempt until one succeeds: with no socket chosen, the
    /// socket is looked for again each time, so a bar started before the user daemon finds
    /// it once it runs. After that the watch keeps to that daemon, through its restarts.
    /// Through ssh (`--host`), each attempt starts a new ssh, and a failed one (an ssh
    /// failure, `bridgeFailed`) is retried as an unreachable socket is.
    let locateClient: () -> StopwatchClient
    private var connectedClient: StopwatchClient?
    let name: String?
    let format: WatchFormat
    var tickRate: TickRateDetector

    init(client: @escaping () -> StopwatchClient, name: String?, format: WatchFormat, tenths: Bool) {
        self.locateClient = client
        self.name = name
        self.format = format
        self.tickRate = TickRateDetector(showsTenths: tenths)
    }

    static let firstRetry: Duration = .milliseconds(250)
    static let longestRetry: Duration = .seconds(5)

    mutating func run() -> Never {
        let redraw = FileDescriptor.standardOutput.isTerminal
        if redraw { CurrentProcess.endLineAndExitOnInterrupt() }
        // A bar that restarts leaves its old watcher behind; an idle one would never write,
        // so never learn that nobody reads it any more.
        CurrentProcess.exitWhenStandardOutputCloses()
        var retry = Self.firstRetry
        var saidUnavailable = false
        while true {
            do {
                let client = connectedClient ?? locateClient()
                let stream = try client.openWatch(name)
                defer { stream.close() }
                connectedClient = client
                tickRate.streamRestarted()
                // The first reply within a call's timeout: `openWatch` waits for nothing, and
                // through ssh to a host that went silent the bar would show nothing for
                // minutes. Late, it is the unavailable line and a retry (as `Waiter` does).
                var first = true
                while true {
                    let stopwatch: Stopwatch
                    if first {
                        stopwatch = try stream.firstUpdate(within: client.timeout).stopwatch
                        first = false
                    } else {
                        stopwatch = try stream.next()
                    }
                    retry = Self.firstRetry
                    saidUnavailable = false
                    tickRate.observe(stopwatch)
                    emit(format.line(for: stopwatch, tenths: tickRate.showsTenths), redraw: redraw)
                }
            } catch {
                switch error {
                case .unreachable(_, let reason), .connectionClosed(_, let reason), .bridgeFailed(_, let reason):
                    if !saidUnavailable {
                        emit(format.unavailableLine(name: name ?? StopwatchName.defaultName, reason: reason), redraw: redraw)
                        saidUnavailable = true
                    }
                    CurrentProcess.sleep(for: retry)
                    retry = min(retry * 2, Self.longestRetry)
                default:
                    if redraw { Output.write("\n") }
                    Diagnostics.fail("swctl: \(error.swctlMessage)", status: error.exitStatus)
                }
            }
        }
    }

    private func emit(_ line: String, redraw: Bool) {
        guard redraw else { return Output.write(line + "\n") }
        // "\r" and "erase to end of line" redraw in place on a terminal, if the line does not
        // wrap (a long note): cut to the window's width less one cell, as some terminals
        // wrap as soon as the last cell is written.
        let columns = FileDescriptor.standardOutput.terminalColumns ?? 80
        Output.write("\r\u{1B}[K" + TerminalWidth.cut(line, to: columns - 1))
    }
}
