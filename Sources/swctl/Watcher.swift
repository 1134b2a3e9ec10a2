import StopWatchCore

/// `swctl watch`: prints each update in the chosen format until interrupted. On a terminal
/// it redraws one line; into a pipe it writes one line per update. When the daemon goes
/// away it says so once, in the same format, and reconnects with backoff.
struct Watcher {
    let client: StopWatchClient
    let name: String?
    let format: WatchFormat
    var tenths: Bool

    init(client: StopWatchClient, name: String?, format: WatchFormat, tenths: Bool) {
        self.client = client
        self.name = name
        self.format = format
        self.tenths = tenths
    }

    static let firstRetry: Duration = .milliseconds(250)
    static let longestRetry: Duration = .seconds(5)

    mutating func run() -> Never {
        let redraw = FileDescriptor.standardOutput.isTerminal
        if redraw { CurrentProcess.endLineAndExitOnInterrupt() }
        var retry = Self.firstRetry
        var saidUnavailable = false
        while true {
            do {
                let stream = try client.openWatch(name)
                defer { stream.close() }
                var previous: Stopwatch?
                while true {
                    let stopwatch = try stream.next()
                    retry = Self.firstRetry
                    saidUnavailable = false
                    if let previous { noticeTickInterval(previous, stopwatch) }
                    emit(format.line(for: stopwatch, tenths: tenths), redraw: redraw)
                    previous = stopwatch
                }
            } catch {
                switch error {
                case .unreachable(_, let reason):
                    if !saidUnavailable {
                        emit(format.unavailableLine(name: name ?? StopwatchName.defaultName, reason: reason), redraw: redraw)
                        saidUnavailable = true
                    }
                    CurrentProcess.sleep(for: retry)
                    retry = min(retry * 2, Self.longestRetry)
                default:
                    if redraw { Output.write("\n") }
                    Diagnostics.fail("swctl: \(error)", status: error.exitStatus)
                }
            }
        }
    }

    /// Shows tenths once two ticks in a row come less than a second apart: the daemon's
    /// tick is then under a second, and whole seconds would hide most updates.
    private mutating func noticeTickInterval(_ previous: Stopwatch, _ current: Stopwatch) {
        guard !tenths, previous.state == .counting, current.state == .counting,
            previous.lapsMs == current.lapsMs
        else { return }
        let gap = current.elapsedMs - previous.elapsedMs
        // Under 900 ms, not 1000: with a 1 s tick, one late delivery then an on-time one are
        // a little under a second apart.
        if gap > 0, gap < 900 { tenths = true }
    }

    private func emit(_ line: String, redraw: Bool) {
        // "\r" and "erase to end of line" redraw in place on a terminal.
        Output.write(redraw ? "\r\u{1B}[K" + line : line + "\n")
    }
}
