import LinuxSystem
import StopwatchProtocol
import Varlink

/// The environment a hook is run with (SPEC §4): the daemon's own, plus what the event is.
enum HookEnvironment {
    /// The variables set for every event (some only when they apply).
    static let names = [
        "STOPWATCHD_EVENT", "STOPWATCHD_NAME", "STOPWATCHD_STATE", "STOPWATCHD_ELAPSED_MS",
        "STOPWATCHD_TARGET_MS", "STOPWATCHD_LATE_MS", "STOPWATCHD_NOTE", "STOPWATCHD_SOCKET",
        "STOPWATCHD_PHASE",
    ]
    /// systemd's messages to the daemon itself (its notify socket, watchdog, socket
    /// activation): not inherited, so that no hook takes them for its own.
    /// (The daemon's environment is read for hooks before it unsets systemd's `LISTEN_*`
    /// variables: they are taken out here.)
    static let daemonOnly = ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"]

    /// The event's variables: `STOPWATCHD_TARGET_MS` only for a countdown,
    /// `STOPWATCHD_LATE_MS` for an expiry, and for any event whose hooks waited in the
    /// outbox across a restart, `STOPWATCHD_NOTE` when the counting interval has a note (for a
    /// stop or remove, the interval it ended), and
    /// `STOPWATCHD_PHASE` for a cycle (the label of the phase it is in: for `phase`, the one
    /// that began), `STOPWATCHD_SOCKET` (the socket this daemon serves, so that a hook's `swctl` reaches
    /// it) when known.
    static func variables(for event: StopwatchEvent, socket: String? = nil) -> [(name: String, value: String)] {
        let stopwatch = event.update.stopwatch
        var variables = [
            ("STOPWATCHD_EVENT", event.event.rawValue),
            ("STOPWATCHD_NAME", stopwatch.name),
            ("STOPWATCHD_STATE", stopwatch.state.rawValue),
            ("STOPWATCHD_ELAPSED_MS", String(stopwatch.elapsedMs)),
        ]
        if let target = stopwatch.targetMs { variables.append(("STOPWATCHD_TARGET_MS", String(target))) }
        if event.event == .expired || event.late > .zero { variables.append(("STOPWATCHD_LATE_MS", String(max(event.late.milliseconds, 0)))) }
        // A note holds no control character (`IntervalNote`), so it is one line of text. For a
        // stop, the note of the interval it ended: the stopwatch no longer has one.
        if let note = stopwatch.note ?? event.endedNote { variables.append(("STOPWATCHD_NOTE", note)) }
        // A label is a valid name part: one line, no control character.
        if let phase = stopwatch.cycle?.currentLabel { variables.append(("STOPWATCHD_PHASE", phase)) }
        if let socket { variables.append(("STOPWATCHD_SOCKET", socket)) }
        return variables.map { (name: $0.0, value: $0.1) }
    }

    /// `base` ("NAME=value" strings, the daemon's environment) without the variables above
    /// and systemd's, then the event's.
    static func environment(_ base: [String], for event: StopwatchEvent, socket: String? = nil) -> [String] {
        let removed = Set(names + daemonOnly)
        let kept = base.filter { entry in
            let name = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? entry
            return !removed.contains(name)
        }
        return kept + variables(for: event, socket: socket).map { "\($0.name)=\($0.value)" }
    }

    /// What the hook reads on its standard input: the `Watch` reply's parameters,
    /// `{"stopwatch":{…},"event":"expired"}`, and a newline.
    static func standardInput(for event: StopwatchEvent) -> [UInt8] {
        event.update.json.serialized + [UInt8(ascii: "\n")]
    }
}
