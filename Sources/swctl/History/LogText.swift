import StopwatchProtocol

/// `swctl log`'s rows: a table for people, CSV for spreadsheets (the JSON is the
/// `Interval` objects themselves).
package enum LogText {
    package static let csvHeader = "name,start,end,elapsed_ms"

    /// `name,start,end,elapsed_ms`: ISO 8601 local times with their offset; `end` empty while
    /// the interval counts. The name, the one field a user wrote, is neutralised for
    /// spreadsheets (`CSVField.neutralised`).
    package static func csv(_ interval: Interval) -> String {
        CSVField.row([
            CSVField.neutralised(interval.name), iso8601(interval.startMs), interval.endMs.map(iso8601) ?? "", "\(interval.elapsedMs)",
        ])
    }

    /// The header row of the table, the NAME column `nameWidth` cells wide.
    package static func header(nameWidth: Int) -> String {
        TerminalWidth.padded("NAME", to: nameWidth) + "  " + TerminalWidth.padded("START", to: 19) + "  "
            + TerminalWidth.padded("END", to: 19) + "  ELAPSED"
    }

    /// One row: local times, `counting` for the end of an open interval, elapsed as H:MM:SS.
    package static func row(_ interval: Interval, nameWidth: Int) -> String {
        let end = interval.endMs.map(localText) ?? "counting"
        return TerminalWidth.padded(shown(interval.name), to: nameWidth) + "  " + localText(interval.startMs) + "  "
            + TerminalWidth.padded(end, to: 19) + "  " + ElapsedText.string(milliseconds: interval.elapsedMs, tenths: false)
    }

    /// A name as the table shows it: control characters escaped, so that printing it cannot
    /// drive the terminal (CSV and JSON carry it as it is).
    package static func shown(_ name: String) -> String {
        StopwatchName.printable(name)
    }

    /// The cells `name` takes in the table.
    package static func width(_ name: String) -> Int {
        TerminalWidth.of(shown(name))
    }

    private static func localText(_ milliseconds: Int64) -> String {
        LocalTime.dateTime(milliseconds)?.text ?? "\(milliseconds)"
    }

    package static func iso8601(_ milliseconds: Int64) -> String {
        LocalTime.dateTime(milliseconds)?.iso8601 ?? "\(milliseconds)"
    }
}
