import StopwatchProtocol

/// One `swctl` command, carrying exactly what it uses (SPEC §5); what every command may use
/// (the socket, `--host`, `--json`) is the invocation's. A new command is a case here, its
/// word in `Word`, its arm in `init`, its arm in `CommandRunner` and its lines in the usage.
package enum Command: Equatable, Sendable {
    /// A nil name is the daemon's default stopwatch, in every case below.
    /// `--at` (nil: now) and `--note`.
    case start(name: String?, at: When? = nil, note: String? = nil)
    case stop(name: String?, at: When? = nil)
    case toggle(name: String?, at: When? = nil, note: String? = nil)
    case reset(name: String?)
    case lap(name: String?)
    case status(name: String?)
    case list
    case remove(name: String)
    case timer(name: String?, TimerAction)
    /// `cycle [NAME] DURATION[:LABEL]...` and `pomodoro [NAME]` (`CyclePlan.pomodoro`):
    /// `StartCycle`; `--rounds` (nil: without end), `--manual` (auto false).
    case cycle(name: String?, phases: [Stopwatch.Phase], rounds: Int?, auto: Bool)
    case next(name: String?)
    /// `snooze [NAME] [DURATION]`: `by` is `CyclePlan.defaultSnooze` when none is given.
    case snooze(name: String?, by: Duration)
    case restart(name: String?)
    /// `skip-sleep`: `SetCountsSleep(false)`; `--off`: true again.
    case skipSleep(name: String?, off: Bool)
    /// `--for` (nil: decided by the stopwatch's first state) and `--timeout`.
    case wait(name: String?, for: WaitCondition?, timeout: Duration?)
    /// `--format`, else JSON with `--json`, else plain.
    case watch(name: String?, format: WatchFormat)
    /// A nil name is every stopwatch's intervals.
    case log(name: String?, HistoryRange, HistoryFormat)
    case report(HistoryRange, by: ReportGrouping, HistoryFormat)
    /// `track NAME FROM TO [--note TEXT]`.
    case track(name: String, from: When, to: When, note: String?)
    /// `amend INTERVAL`: what is given changes (at least one of them).
    case amend(IntervalReference, IntervalChanges)
    case delete(IntervalReference)
    case undo
    /// `devices`: every device whose history the daemon reads.
    case devices
    case bridge

    /// The commands as written, in the order the usage lists them.
    package enum Word: String, CaseIterable, Sendable {
        case start, stop, toggle, reset, lap, status, list, remove, timer
        case cycle, pomodoro, next, snooze, restart
        case skipSleep = "skip-sleep"
        case wait, watch, log, report, track, amend, delete, undo, devices, bridge
    }

    /// The command `word` names, with the words after it (its NAME, and `timer`'s DURATION)
    /// and the options, each checked against it.
    init(_ word: Word, words: ArraySlice<String>, options: CommandLineOptions) throws(UsageError) {
        try options.check(for: word)
        var words = words
        /// The NAME a command may take, valid; nil when none is given.
        func name() throws(UsageError) -> String? {
            guard words.count <= 1 else { throw UsageError("\(word.rawValue) takes at most one name, got \(words.count)") }
            guard let name = words.first else { return nil }
            guard StopwatchName.isValid(name) else { throw UsageError(StopwatchName.invalidNameMessage(name)) }
            return name
        }
        func noName(_ message: String) throws(UsageError) {
            if try name() != nil { throw UsageError(message) }
        }
        switch word {
        case .start: self = .start(name: try name(), at: options.at, note: options.note)
        case .stop: self = .stop(name: try name(), at: options.at)
        case .toggle: self = .toggle(name: try name(), at: options.at, note: options.note)
        case .reset: self = .reset(name: try name())
        case .lap: self = .lap(name: try name())
        case .status: self = .status(name: try name())
        case .list:
            try noName("list takes no name")
            self = .list
        case .remove:
            guard let name = try name() else { throw UsageError("remove needs the NAME of the stopwatch to delete") }
            self = .remove(name: name)
        case .timer:
            // The duration first: it is the last word, and the name the one before it.
            let action = try Self.timerAction(&words, keep: options.keep, off: options.off)
            self = .timer(name: try name(), action)
        case .cycle:
            let phases = try Self.phases(&words)
            self = .cycle(name: try name(), phases: phases, rounds: options.rounds, auto: !options.manual)
        case .pomodoro:
            let phases = CyclePlan.pomodoro.map { Stopwatch.Phase(label: $0.label, targetMs: $0.target.milliseconds) }
            self = .cycle(name: try name(), phases: phases, rounds: options.rounds, auto: !options.manual)
        case .next: self = .next(name: try name())
        case .snooze:
            let by = try Self.snoozeDuration(&words)
            self = .snooze(name: try name(), by: by)
        case .restart: self = .restart(name: try name())
        case .skipSleep: self = .skipSleep(name: try name(), off: options.off)
        case .track:
            guard words.count == 3 else {
                throw UsageError("track takes NAME FROM TO, like 'swctl track work 09:00 12:30'; got \(words.count) words")
            }
            let values = Array(words)
            guard StopwatchName.isValid(values[0]) else { throw UsageError(StopwatchName.invalidNameMessage(values[0])) }
            self = .track(name: values[0], from: try Self.when(values[1], "FROM"), to: try Self.when(values[2], "TO"), note: options.note)
        case .amend:
            let changes = IntervalChanges(name: options.newName, start: options.start, end: options.end, note: options.note)
            guard changes != IntervalChanges() else {
                throw UsageError("amend needs something to change: --name NAME, --start WHEN, --end WHEN or --note TEXT")
            }
            self = .amend(try Self.interval(words, word), changes)
        case .delete: self = .delete(try Self.interval(words, word))
        case .undo:
            guard words.isEmpty else { throw UsageError("undo takes nothing: it takes back the latest track, amend or delete") }
            self = .undo
        case .devices:
            guard words.isEmpty else { throw UsageError("devices takes nothing: it lists every device whose history the daemon reads") }
            self = .devices
        case .wait: self = .wait(name: try name(), for: options.waitFor, timeout: options.waitTimeout)
        case .watch: self = .watch(name: try name(), format: options.format ?? (options.json ? .json : .plain))
        case .log: self = .log(name: try name(), options.historyRange, options.historyFormat)
        case .report:
            try noName("report takes no name: it counts every stopwatch")
            self = .report(options.historyRange, by: options.grouping ?? .name, options.historyFormat)
        case .bridge:
            try noName("bridge takes no name")
            guard options.host == nil else {
                throw UsageError("bridge relays to a daemon on this machine; --host goes with the other commands")
            }
            guard !options.json else { throw UsageError("bridge takes no --json: it relays varlink as it is") }
            self = .bridge
        }
        // After the words: a line with more than one mistake is told the same one as ever.
        if options.format != nil, word != .watch { throw UsageError("--format goes with watch") }
    }

    /// The one INTERVAL `amend` and `delete` take.
    private static func interval(_ words: ArraySlice<String>, _ word: Word) throws(UsageError) -> IntervalReference {
        guard words.count == 1, let text = words.first else {
            throw UsageError("\(word.rawValue) takes one INTERVAL: \(IntervalReference.forms)")
        }
        return try IntervalReference(text)
    }

    /// A WHEN word of `track`.
    private static func when(_ text: String, _ role: String) throws(UsageError) -> When {
        guard let when = When(text) else { throw UsageError("track's \(role) takes \(When.forms); not '\(StopwatchName.printable(text))'") }
        return when
    }

    /// `cycle`'s phases: every word after the first, and the first too when it reads as a
    /// duration (`swctl cycle 25m:focus 5m:break`; otherwise it is the NAME). Each is
    /// `DURATION[:LABEL]`, labelled `1`, `2`, … when no label is given. Takes the phases off
    /// `words`, leaving the name.
    private static func phases(_ words: inout ArraySlice<String>) throws(UsageError) -> [Stopwatch.Phase] {
        let nameCount = words.first.map { DurationText.parse(String($0.prefix { $0 != ":" })) == nil ? 1 : 0 } ?? 0
        let texts = words.dropFirst(nameCount)
        words = words.prefix(nameCount)
        guard CyclePlan.phaseCount.contains(texts.count) else {
            let example = "like 'swctl cycle 25m:focus 5m:break'"
            throw texts.isEmpty
                ? UsageError("cycle needs its phases, \(example): \(CyclePlan.phaseRule)")
                : UsageError("cycle takes \(CyclePlan.phaseRule), got \(texts.count)")
        }
        var phases: [Stopwatch.Phase] = []
        for (index, text) in texts.enumerated() {
            let durationText = String(text.prefix { $0 != ":" })
            let label = text.count > durationText.count ? String(text.dropFirst(durationText.count + 1)) : CyclePlan.defaultLabel(index)
            guard let duration = TimerDuration.parse(durationText) else {
                throw UsageError("'\(StopwatchName.printable(durationText))' is not a phase's duration: \(TimerDuration.rule)")
            }
            guard CyclePlan.isValidLabel(label) else {
                throw UsageError("'\(StopwatchName.printable(label))' is not a phase label: \(CyclePlan.labelRule)")
            }
            phases.append(Stopwatch.Phase(label: label, targetMs: duration.milliseconds))
        }
        return phases
    }

    /// `snooze`'s words after the command: `[NAME] [DURATION]`. One word is the duration
    /// when it reads as one (`swctl snooze 10m`), else the name. Takes the duration off
    /// `words`, leaving the name; `CyclePlan.defaultSnooze` when none is given.
    private static func snoozeDuration(_ words: inout ArraySlice<String>) throws(UsageError) -> Duration {
        guard words.count <= 2 else { throw UsageError("snooze takes a NAME and a DURATION, got \(words.count) words") }
        guard let last = words.last, words.count == 2 || DurationText.parse(last) != nil else { return CyclePlan.defaultSnooze }
        words.removeLast()
        guard let duration = DurationText.parse(last), CyclePlan.snooze.contains(duration) else {
            throw UsageError("'\(StopwatchName.printable(last))' is not a snooze: write it like 5m or 90s, \(CyclePlan.snoozeRule)")
        }
        // The daemon counts whole milliseconds.
        return .milliseconds(duration.milliseconds)
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

/// What `swctl timer` asks of the daemon.
package enum TimerAction: Equatable, Sendable {
    /// `timer [NAME] DURATION`: `Countdown`, a new countdown from zero, whatever the
    /// stopwatch was doing.
    case countdown(Duration)
    /// `timer [NAME] DURATION --keep`: `SetTarget`, the count goes on with this target (a
    /// reminder on a running stopwatch).
    case keepCounting(Duration)
    /// `timer [NAME] --off`: `SetTarget` null, a plain stopwatch again.
    case off
}

/// What `amend` changes; nil: as it is.
package struct IntervalChanges: Equatable, Sendable {
    package var name: String?
    package var start: When?
    package var end: When?
    package var note: String?

    package init(name: String? = nil, start: When? = nil, end: When? = nil, note: String? = nil) {
        self.name = name
        self.start = start
        self.end = end
        self.note = note
    }
}

/// `log`/`report --since`, `--until`: nil leaves that end of the history open; `--device`:
/// only that device's intervals (its name or id; nil: every device's).
package struct HistoryRange: Equatable, Sendable {
    package var since: When?
    package var until: When?
    package var device: String?

    package init(since: When? = nil, until: When? = nil, device: String? = nil) {
        self.since = since
        self.until = until
        self.device = device
    }
}

/// How `log` and `report` print: text for people, `--csv`, or `--json`.
package enum HistoryFormat: Equatable, Sendable {
    case text, csv, json
}

/// `report --by`: totals per name, per local day and name, per device and name, or per
/// cycle phase (its label) and name.
package enum ReportGrouping: String, CaseIterable, Sendable {
    case name, day, device, phase
}

/// The options of a command line, as read, in any order and before the command is known;
/// `Command.init` checks them against it.
struct CommandLineOptions {
    var socket: SocketLocation.ClientChoice?
    var host: String?
    var json = false
    var format: WatchFormat?
    var keep = false
    var off = false
    /// `cycle`/`pomodoro --rounds N` (nil: without end), `--manual`.
    var rounds: Int?
    var manual = false
    var waitFor: WaitCondition?
    var waitTimeout: Duration?
    var since: When?
    var until: When?
    var grouping: ReportGrouping?
    var csv = false
    /// `log`/`report --device`.
    var device: String?
    var at: When?
    var note: String?
    /// `amend --name`.
    var newName: String?
    /// `amend --start`, `--end`.
    var start: When?
    var end: When?

    /// Refuses an option given to a command that does not take it, before anything about
    /// the command's words.
    func check(for word: Command.Word) throws(UsageError) {
        if keep, word != .timer { throw UsageError("--keep goes with timer") }
        if rounds != nil || manual, word != .cycle, word != .pomodoro { throw UsageError("--rounds and --manual go with cycle and pomodoro") }
        if off, word != .timer, word != .skipSleep { throw UsageError("--off goes with timer and skip-sleep") }
        if at != nil, word != .start, word != .stop, word != .toggle { throw UsageError("--at goes with start, stop and toggle") }
        if note != nil, word != .start, word != .toggle, word != .track, word != .amend {
            let hint = word == .stop ? ": a note goes with the start of an interval ('swctl amend @1 --note TEXT' adds one after)" : ""
            throw UsageError("--note goes with start, toggle, track and amend\(hint)")
        }
        // The one place an empty note means something: amend removes the note with it.
        if note == "", word != .amend { throw UsageError("--note takes \(IntervalNote.rule)") }
        if newName != nil || start != nil || end != nil, word != .amend { throw UsageError("--name, --start and --end go with amend") }
        if waitFor != nil || waitTimeout != nil, word != .wait { throw UsageError("--for and --timeout go with wait") }
        // Not a `Set`: `Set<Command.Word>`'s metadata and the search for its `Hashable`
        // conformance would be paid by every swctl at start (docs/PERFORMANCE.md).
        let isHistory = word == .log || word == .report
        if since != nil || until != nil || csv || device != nil, !isHistory {
            throw UsageError("--since, --until, --device and --csv go with log and report")
        }
        if grouping != nil, word != .report { throw UsageError("--by goes with report") }
        if csv, json { throw UsageError("use either --csv or --json, not both") }
    }

    var historyRange: HistoryRange { HistoryRange(since: since, until: until, device: device) }

    /// `--csv` and `--json` are refused together (`check`).
    var historyFormat: HistoryFormat { csv ? .csv : json ? .json : .text }
}
