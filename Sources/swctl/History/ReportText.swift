import Varlink

/// `swctl report`'s output (docs/HISTORY.md, swctl(1)).
package enum ReportText {
    /// The table for people; `bars` (on a terminal) adds a bar per row scaled to the longest
    /// and, per day, a chart of the days.
    package static func human(_ totals: ReportTotals, byDay: Bool, bars: Bool) -> [String] {
        byDay ? humanByDay(totals, bars: bars) : humanByName(totals, bars: bars)
    }

    private static func humanByName(_ totals: ReportTotals, bars: Bool) -> [String] {
        let width = ([4, 5] + totals.names.map { LogText.width($0.name) }).max() ?? 5
        let times = totals.names.map { ElapsedText.string(milliseconds: $0.milliseconds, tenths: false) }
        let totalTime = ElapsedText.string(milliseconds: totals.total, tenths: false)
        let timeWidth = (times + [totalTime, "TIME"]).map(\.count).max() ?? 4
        let longest = totals.names.first?.milliseconds ?? 0
        var lines = [TerminalWidth.padded("NAME", to: width) + "  TIME"]
        for (row, time) in zip(totals.names, times) {
            var line = TerminalWidth.padded(LogText.shown(row.name), to: width) + "  " + leftPadded(time, timeWidth)
            if bars { line += "  " + Bar.string(row.milliseconds, of: longest) }
            lines.append(trimmed(line))
        }
        lines.append(TerminalWidth.padded("total", to: width) + "  " + leftPadded(totalTime, timeWidth))
        return lines
    }

    private static func humanByDay(_ totals: ReportTotals, bars: Bool) -> [String] {
        // A row of days (`1970-01-01/9999-12-31`) widens the column; the chart is of days: a
        // row of years of time would flatten it.
        let groups = totals.days.map { (label: $0.day, names: $0.names, total: $0.total, charted: !$0.spansDays) }
        return humanByGroup(groups, header: "DAY", minimumWidth: 10, total: totals.total, bars: bars)
    }

    /// What a group of `--by device` or `--by phase` is called: the header of its column in
    /// the table, the CSV's and the JSON's.
    package enum GroupKind: Sendable {
        case device, phase

        var header: String { self == .device ? "DEVICE" : "PHASE" }
        var field: String { self == .device ? "device" : "phase" }
        var plural: String { self == .device ? "devices" : "phases" }
    }

    /// What the table shows for the intervals of no phase (`--by phase`).
    package static let noPhase = "-"

    /// `--by device`: per device (longest first) and name, as by day; the chart is of devices.
    package static func humanByDevice(_ totals: ReportTotals, bars: Bool) -> [String] {
        humanByGroup(totals, .device, bars: bars)
    }

    /// `--by device` or `--by phase` (the intervals of no phase under `-`): per group (longest
    /// first) and name, as by day; the chart is of the groups.
    package static func humanByGroup(_ totals: ReportTotals, _ kind: GroupKind, bars: Bool) -> [String] {
        let groups = totals.groups.map { (label: $0.label.map(LogText.shown) ?? noPhase, names: $0.names, total: $0.total, charted: true) }
        return humanByGroup(groups, header: kind.header, minimumWidth: kind.header.count, total: totals.total, bars: bars)
    }

    /// Rows per group (a day, a device) and name, with each group's total and the total, and
    /// with `bars` a chart of the groups `charted`.
    private static func humanByGroup(
        _ groups: [(label: String, names: [ReportTotals.Row], total: Int64, charted: Bool)], header: String, minimumWidth: Int,
        total: Int64, bars: Bool
    ) -> [String] {
        let labelWidth = ([minimumWidth] + groups.map { TerminalWidth.of($0.label) }).max() ?? minimumWidth
        let width = ([5] + groups.flatMap { $0.names.map { LogText.width($0.name) } }).max() ?? 5
        let time = { (milliseconds: Int64) in ElapsedText.string(milliseconds: milliseconds, tenths: false) }
        let timeWidth = ([time(total), "TIME"] + groups.map { time($0.total) }).map(\.count).max() ?? 4
        let row = { (label: String, name: String, milliseconds: Int64) in
            TerminalWidth.padded(label, to: labelWidth) + "  " + TerminalWidth.padded(LogText.shown(name), to: width) + "  "
                + leftPadded(time(milliseconds), timeWidth)
        }
        var lines = [trimmed(TerminalWidth.padded(header, to: labelWidth) + "  " + TerminalWidth.padded("NAME", to: width) + "  TIME")]
        for group in groups {
            for (index, name) in group.names.enumerated() {
                lines.append(row(index == 0 ? group.label : "", name.name, name.milliseconds))
            }
            lines.append(row("", "total", group.total))
        }
        lines.append(row("total", "", total))
        let charted = groups.filter(\.charted)
        if bars, !charted.isEmpty {
            let longest = charted.map(\.total).max() ?? 0
            let chartWidth = charted.map { TerminalWidth.of($0.label) }.max() ?? 0
            lines.append("")
            for group in charted {
                lines.append(trimmed(
                    TerminalWidth.padded(group.label, to: chartWidth) + "  " + leftPadded(time(group.total), timeWidth) + "  "
                        + Bar.string(group.total, of: longest)
                ))
            }
        }
        return lines
    }

    /// `--by device`: `device,name,elapsed_ms`, a row per device and name, neutralised as
    /// `csv` does.
    package static func csvByDevice(_ totals: ReportTotals) -> [String] {
        csvByGroup(totals, .device)
    }

    /// `--by device` or `--by phase`: `device,name,elapsed_ms` or `phase,name,elapsed_ms` (the
    /// phase empty for intervals of none).
    package static func csvByGroup(_ totals: ReportTotals, _ kind: GroupKind) -> [String] {
        var lines = ["\(kind.field),name,elapsed_ms"]
        for group in totals.groups {
            let label = group.label.map(CSVField.neutralised) ?? ""
            lines += group.names.map { CSVField.row([label, CSVField.neutralised($0.name), "\($0.milliseconds)"]) }
        }
        return lines
    }

    /// `name,elapsed_ms`, or `day,name,elapsed_ms` by day; a header, no total rows. Names are
    /// neutralised for spreadsheets (`CSVField.neutralised`); days and times are swctl's own.
    package static func csv(_ totals: ReportTotals, byDay: Bool) -> [String] {
        guard byDay else {
            return ["name,elapsed_ms"] + totals.names.map { CSVField.row([CSVField.neutralised($0.name), "\($0.milliseconds)"]) }
        }
        var lines = ["day,name,elapsed_ms"]
        for day in totals.days {
            lines += day.names.map { CSVField.row([day.day, CSVField.neutralised($0.name), "\($0.milliseconds)"]) }
        }
        return lines
    }

    /// `{"since_ms","until_ms","names":[{"name","elapsed_ms"}],"total_ms"}`; by day, `"days":
    /// [{"day","names","total_ms"}]` in place of `names`. An open end of the range is null.
    package static func json(_ totals: ReportTotals, byDay: Bool, since: Int64?, until: Int64?) -> JSONValue {
        let names = { (rows: [ReportTotals.Row]) -> JSONValue in
            .array(rows.map { .object(["name": .string($0.name), "elapsed_ms": .int($0.milliseconds)]) })
        }
        var object: JSONObject = [
            "since_ms": since.map(JSONValue.int) ?? .null,
            "until_ms": until.map(JSONValue.int) ?? .null,
        ]
        if byDay {
            object["days"] = .array(totals.days.map { .object(["day": .string($0.day), "names": names($0.names), "total_ms": .int($0.total)]) })
        } else {
            object["names"] = names(totals.names)
        }
        object["total_ms"] = .int(totals.total)
        return .object(object)
    }

    /// `--by device`: as by day, with `"devices":[{"device","names","total_ms"}]` in place of
    /// `days`.
    package static func jsonByDevice(_ totals: ReportTotals, since: Int64?, until: Int64?) -> JSONValue {
        jsonByGroup(totals, .device, since: since, until: until)
    }

    /// `--by device`, or `--by phase` with `"phases":[{"phase","names","total_ms"}]` (phase
    /// null for the intervals of none).
    package static func jsonByGroup(_ totals: ReportTotals, _ kind: GroupKind, since: Int64?, until: Int64?) -> JSONValue {
        .object([
            "since_ms": since.map(JSONValue.int) ?? .null,
            "until_ms": until.map(JSONValue.int) ?? .null,
            kind.plural: .array(totals.groups.map { group in
                .object([
                    kind.field: group.label.map(JSONValue.string) ?? .null,
                    "names": .array(group.names.map { .object(["name": .string($0.name), "elapsed_ms": .int($0.milliseconds)]) }),
                    "total_ms": .int(group.total),
                ])
            }),
            "total_ms": .int(totals.total),
        ])
    }

    private static func leftPadded(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    private static func trimmed(_ line: String) -> String {
        var line = line
        while line.last == " " { line.removeLast() }
        return line
    }
}
