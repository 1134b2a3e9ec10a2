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
        case .stop(let name, _), .reset(let name), .lap(let name), .next(let name), .snooze(let name, _), .restart(let name):
            name ?? StopwatchName.defaultName
        case .remove(let name): name
        default: nil
        }
    }

    private func perform() throws(ClientError) {
        switch invocation.command {
        case .start(let name, let at, let note): show(try client.start(name, at: at.map { instant($0, "--at") }, note: note))
        case .stop(let name, let at): show(try client.stop(name, at: at.map { instant($0, "--at") }))
        case .toggle(let name, let at, let note): show(try client.toggle(name, at: at.map { instant($0, "--at") }, note: note))
        case .skipSleep(let name, let off):
            // `skip-sleep` is counts_sleep false; its `--off`, true again.
            show(try client.setCountsSleep(name, off))
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
        case .cycle(let name, let phases, let rounds, let auto):
            show(try client.startCycle(name, phases: phases, rounds: rounds, auto: auto))
        case .next(let name): show(try client.next(name))
        case .snooze(let name, let by): show(try client.snooze(name, by: by))
        case .restart(let name): show(try client.restart(name))
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
        case .track(let name, let from, let to, let note):
            show(try client.track(name, start: instant(from, "FROM"), end: instant(to, "TO"), note: note), "tracked")
        case .amend(let reference, let changes):
            let id = try resolve(reference)
            let amended = try client.amend(
                id, name: changes.name, start: changes.start.map { instant($0, "--start") }, end: changes.end.map { instant($0, "--end") },
                note: changes.note
            )
            show(amended, "amended")
        case .delete(let reference):
            show(try client.delete(try resolve(reference)), "deleted")
        case .undo:
            let (interval, undone) = try client.undo()
            if invocation.json {
                // SPEC §5: `--json` is the `Interval`, as for track, amend and delete; what
                // was undone is said in the text output.
                Output.line(interval.json.text)
            } else {
                Output.line(CorrectionText.undone(undone, interval))
            }
        case .devices:
            do {
                HistoryPrinter.devices(try client.devices(), json: invocation.json)
            } catch .refused(let errorName, _) where errorName == VarlinkError.methodNotFound("").name {
                throw .daemonTooOld(feature: "devices")
            }
        case .bridge:
            // Bytes both ways, and no calls, to the socket here: `bridge` takes no `--host`,
            // and `$STOPWATCHD_HOST` is not for it (`SwctlInvocation.remoteHost`).
            guard case .socket(let path) = client.endpoint else {
                Diagnostics.fail("swctl: bridge relays to a daemon on this machine", status: 2)
            }
            Bridge(path: path).run()
        }
    }

    /// An interval as a correction left it: `verb` and one line, or the `Interval` object.
    private func show(_ interval: Interval, _ verb: String) {
        Output.line(invocation.json ? interval.json.text : "\(verb) \(LogText.line(interval))")
    }

    /// A WHEN as an instant against the wall clock and the time zone now; exits 2 when it
    /// names one this system cannot represent.
    private func instant(_ when: When, _ option: String) -> Int64 {
        LocalTime.reloadZone()
        let now = Posix.clockTime(.realtime).milliseconds
        guard let instant = when.instant(now: now) else {
            if when.isSkippedToday(now: now), case .clock(let hour, let minute) = when {
                let time = "\(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute)"
                Diagnostics.fail("swctl: \(option) \(time) did not happen today (the clocks skipped it); give YYYY-MM-DDTHH:MM, or Nm ago", status: 2)
            }
            Diagnostics.fail("swctl: \(option) names a time this system cannot represent (see swctl --help)", status: 2)
        }
        return instant
    }

    /// The id (or prefix) the daemon is to take for `reference`: `@N` found in the history
    /// now (`LatestIntervalSearch`); refused (exit 1) when there are fewer than N.
    private func resolve(_ reference: IntervalReference) throws(ClientError) -> String {
        switch reference {
        case .id(let id):
            return id
        case .latest(let count):
            let outcome = try LatestIntervalSearch(count: count).run(now: Posix.clockTime(.realtime).milliseconds) { since throws(ClientError) in
                HistoryReading(try client.history(nil, since: since))
            }
            switch outcome {
            case .found(let interval):
                // A daemon of the previous release gives no ids: too old, as for `--at` (70).
                guard !interval.id.isEmpty else { throw .daemonTooOld(feature: "@\(count)") }
                return interval.id
            case .tooFew(let ended):
                Diagnostics.fail("swctl: \(CorrectionText.tooFew(count, ended: ended))", status: 1)
            }
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
