import LinuxSystem
import StopwatchProtocol
import StopwatchdClient
import Varlink

/// `swctl log` and `swctl report`: reads `History` a batch at a time and prints as it
/// goes (log's CSV and JSON; its table, numbered, reads it once or twice: `LogTable`) or adds
/// up as it goes (report), so memory never holds the history.
struct HistoryPrinter {
    let client: StopwatchClient
    let range: HistoryRange
    let format: HistoryFormat

    /// `log`: the intervals of `name` (nil: of every stopwatch). The table is numbered as
    /// `@N` resolves (`LogTable`); CSV and JSON are the intervals alone, as they come.
    ///
    /// The table asks `Devices` once: a DEVICE column when more than one device has history,
    /// and `--device` given as an id compared by the name it has (the table filters the
    /// unfiltered history itself, to number it). A daemon without `Devices` (of an earlier
    /// release) gets the column when the rows span several devices, and `--device` is too new
    /// for it.
    func log(_ name: String?) throws(ClientError) {
        let bounds = try resolvedRange()
        guard format == .text else {
            let device = try resolvedDevice()
            let stream = try client.history(name, since: bounds.since, until: bounds.until, device: device)
            defer { stream.close() }
            try intervals(stream, json: format == .json)
            return
        }
        let devices: [Device]?
        do {
            devices = try client.devices()
        } catch .refused(let errorName, _) where errorName == VarlinkError.methodNotFound("").name {
            guard range.device == nil else { throw .daemonTooOld(feature: "--device") }
            devices = nil
        }
        let device = devices.flatMap(resolvedDevice(among:)).map { resolved in
            DevicesText.name(of: resolved, among: devices ?? [], warn: Diagnostics.warn)
        }
        try LogTable(
            numbering: LogNumbering(name: name, until: bounds.until, device: device),
            deviceColumn: devices.map(DevicesText.severalHaveHistory)
        ).print(
            open: { () throws(ClientError) in HistoryReading(try client.history(nil, since: bounds.since)) },
            write: Output.write, warn: Diagnostics.warn
        )
    }

    /// `devices`: the table, or with `--json` the `Device` objects as a JSON array.
    static func devices(_ devices: [Device], json: Bool) {
        if json {
            Output.line(devices.isEmpty ? "[]" : "[\n" + devices.map(\.json.text).joined(separator: ",\n") + "\n]")
        } else {
            DevicesText.table(devices).forEach(Output.line)
        }
    }

    /// `report`: every stopwatch's time in the range, added up.
    func report(by grouping: ReportGrouping) throws(ClientError) {
        let bounds = try resolvedRange()
        let device = try resolvedDevice()
        let stream = try client.history(nil, since: bounds.since, until: bounds.until, device: device)
        defer { stream.close() }
        switch grouping {
        case .device:
            try reportByGroup(stream, .device, since: bounds.since, until: bounds.until, now: bounds.now)
            return
        case .phase:
            try reportByGroup(stream, .phase, since: bounds.since, until: bounds.until, now: bounds.now)
            return
        case .name, .day: break
        }
        try report(stream, byDay: grouping == .day, since: bounds.since, until: bounds.until, now: bounds.now)
    }

    /// What `--device DEVICE` is sent as: a name or a full id as given, an id's prefix of 8
    /// digits or more (as `swctl devices` shows it) as the full id. One that names no device
    /// the daemon knows is refused (exit 1), so that a misspelt name is not read as a device
    /// with no time: one `Devices` call, made only when `--device` is given.
    private func resolvedDevice() throws(ClientError) -> String? {
        guard range.device != nil else { return nil }
        let devices: [Device]
        do {
            devices = try client.devices()
        } catch .refused(let errorName, _) where errorName == VarlinkError.methodNotFound("").name {
            throw .daemonTooOld(feature: "--device")
        }
        return resolvedDevice(among: devices)
    }

    private func resolvedDevice(among devices: [Device]) -> String? {
        guard let device = range.device else { return nil }
        switch DevicesText.resolve(device, among: devices) {
        case .device(let resolved): return resolved
        case .none: Diagnostics.fail("swctl: no device is named '\(device)' or has that id (swctl devices lists them)", status: 1)
        case .ambiguous: Diagnostics.fail("swctl: '\(device)' begins the ids of several devices: give more of it (swctl devices --json shows them whole)", status: 1)
        }
    }

    /// `report --by device` or `--by phase`: whole intervals (`next()`), for their device or
    /// phase, which the times of the plain path (`nextTimes()`) do not carry.
    private func reportByGroup(
        _ stream: HistoryStream, _ kind: ReportText.GroupKind, since: Int64?, until: Int64?, now: Int64
    ) throws(ClientError) {
        var aggregator = ReportAggregator(since: since, until: until, now: now, byDay: false)
        while let batch = try stream.next() {
            for interval in batch {
                switch kind {
                case .device: aggregator.add(byDevice: interval)
                case .phase: aggregator.add(byPhase: interval)
                }
            }
        }
        let totals = aggregator.totals
        let lines = switch format {
        case .json: [ReportText.jsonByGroup(totals, kind, since: since, until: until).text]
        case .csv: ReportText.csvByGroup(totals, kind)
        case .text: ReportText.humanByGroup(totals, kind, bars: FileDescriptor.standardOutput.isTerminal)
        }
        Output.write(lines.map { $0 + "\n" }.joined())
    }

    /// `--since` and `--until` as instants against the wall clock now (and the time zone
    /// now); exits 2 when they are in the wrong order.
    private func resolvedRange() throws(ClientError) -> (since: Int64?, until: Int64?, now: Int64) {
        let now = Posix.clockTime(.realtime).milliseconds
        LocalTime.reloadZone()
        let since = try resolve(range.since, "--since", now: now)
        let until = try resolve(range.until, "--until", now: now)
        if let since, let until, since >= until {
            Diagnostics.fail("swctl: --since must come before --until (see swctl --help)", status: 2)
        }
        return (since, until, now)
    }

    private func resolve(_ when: When?, _ option: String, now: Int64) throws(ClientError) -> Int64? {
        guard let when else { return nil }
        guard let instant = when.instant(now: now) else {
            Diagnostics.fail("swctl: \(option) names a time this system cannot represent (see swctl --help)", status: 2)
        }
        return instant
    }

    /// `log --json` (`json`) or `log --csv`: the intervals as they come, without numbers.
    private func intervals(_ stream: HistoryStream, json: Bool) throws(ClientError) {
        if json {
            // One array, written a batch at a time: `[`, the objects, `]`; begun only once the
            // daemon has answered, so that a refusal leaves no half array on standard output.
            var first = true
            var pending = try stream.next()
            Output.write("[")
            while let batch = pending {
                var text = ""
                for interval in batch {
                    text += (first ? "\n" : ",\n") + interval.json.text
                    first = false
                }
                if !text.isEmpty { Output.write(text) }
                pending = try stream.next()
            }
            Output.line(first ? "]" : "\n]")
        } else {
            // The header too waits for the daemon's first answer.
            var pending = try stream.next()
            Output.line(LogText.csvHeader)
            while let batch = pending {
                pending = try stream.next()
                guard !batch.isEmpty else { continue }
                Output.write(batch.map { LogText.csv($0) + "\n" }.joined())
            }
        }
    }

    private func report(_ stream: HistoryStream, byDay: Bool, since: Int64?, until: Int64?, now: Int64) throws(ClientError) {
        var aggregator = ReportAggregator(since: since, until: until, now: now, byDay: byDay)
        // Totals need no ids, notes, devices or strings: times, and each name's slot found
        // once per name, not once per interval.
        var slots: [Int] = []
        while let batch = try stream.nextTimes() {
            while slots.count < stream.names.names.count { slots.append(aggregator.slot(for: stream.names.names[slots.count])) }
            for times in batch {
                aggregator.add(slot: slots[Int(times.nameNumber)], startMs: times.startMs, endMs: times.endMs, elapsedMs: times.elapsedMs)
            }
        }
        let totals = aggregator.totals
        let lines = switch format {
        case .json: [ReportText.json(totals, byDay: byDay, since: since, until: until).text]
        case .csv: ReportText.csv(totals, byDay: byDay)
        case .text: ReportText.human(totals, byDay: byDay, bars: FileDescriptor.standardOutput.isTerminal)
        }
        Output.write(lines.map { $0 + "\n" }.joined())
    }
}
