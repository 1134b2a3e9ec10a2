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
        // A row of days (`1970-01-01/9999-12-31`) widens the column.
        let dayWidth = ([10] + totals.days.map(\.day.count)).max() ?? 10
        let width = ([5] + totals.days.flatMap { $0.names.map { LogText.width($0.name) } }).max() ?? 5
        let time = { (milliseconds: Int64) in ElapsedText.string(milliseconds: milliseconds, tenths: false) }
        let timeWidth = ([time(totals.total), "TIME"] + totals.days.map { time($0.total) }).map(\.count).max() ?? 4
        let row = { (day: String, name: String, milliseconds: Int64) in
            TerminalWidth.padded(day, to: dayWidth) + "  " + TerminalWidth.padded(LogText.shown(name), to: width) + "  "
                + leftPadded(time(milliseconds), timeWidth)
        }
        var lines = [trimmed(TerminalWidth.padded("DAY", to: dayWidth) + "  " + TerminalWidth.padded("NAME", to: width) + "  TIME")]
        for day in totals.days {
            for (index, name) in day.names.enumerated() {
                lines.append(row(index == 0 ? day.day : "", name.name, name.milliseconds))
            }
            lines.append(row("", "total", day.total))
        }
        lines.append(row("total", "", totals.total))
        // The chart is of days: a row of years of time would flatten it.
        let days = totals.days.filter { !$0.spansDays }
        if bars, !days.isEmpty {
            let longest = days.map(\.total).max() ?? 0
            lines.append("")
            for day in days {
                lines.append(trimmed(day.day + "  " + leftPadded(time(day.total), timeWidth) + "  " + Bar.string(day.total, of: longest)))
            }
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

    private static func leftPadded(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    private static func trimmed(_ line: String) -> String {
        var line = line
        while line.last == " " { line.removeLast() }
        return line
    }
}
