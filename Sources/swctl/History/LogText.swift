import StopwatchProtocol

/// `swctl log`'s rows: a table for people, CSV for spreadsheets (the JSON is the
/// `Interval` objects themselves).
package enum LogText {
    /// The CSV columns. The first four are those of every release; columns are only ever
    /// added at the end, so a script that reads them by position keeps working.
    package static let csvHeader = "name,start,end,elapsed_ms,id,note"

    /// `name,start,end,elapsed_ms,id,note`: ISO 8601 local times with their offset; `end` empty
    /// while the interval counts, `note` empty without one. The name and the note, the
    /// fields a user wrote, are neutralised for spreadsheets (`CSVField.neutralised`), and so
    /// is the id: the daemon's, of 16 hex digits, but read off a socket (or a synced
    /// device's files) that need not hold to that.
    package static func csv(_ interval: Interval) -> String {
        CSVField.row([
            CSVField.neutralised(interval.name), iso8601(interval.startMs), interval.endMs.map(iso8601) ?? "", "\(interval.elapsedMs)",
            CSVField.neutralised(interval.id), interval.note.map(CSVField.neutralised) ?? "",
        ])
    }

    /// The widths of the table's columns, measured on what it shows before it prints.
    package struct Layout: Equatable, Sendable {
        /// Cells of the `@N` column (0: no numbers).
        package var numberWidth = 0
        package var nameWidth = 4
        /// Cells of the DEVICE column; 0: none (one device only).
        package var deviceWidth = 0
        /// Whether the NOTE column is there.
        package var notes = false
        /// Cells of the PHASE column (a cycle's phase label); 0: none (no interval shown has
        /// a phase, and the table is as before cycles).
        package var phaseWidth = 0

        package init(numberWidth: Int = 0, nameWidth: Int = 4, deviceWidth: Int = 0, notes: Bool = false, phaseWidth: Int = 0) {
            self.numberWidth = numberWidth
            self.nameWidth = nameWidth
            self.deviceWidth = deviceWidth
            self.notes = notes
            self.phaseWidth = phaseWidth
        }
    }

    /// The cells of an id as the table shows it: its first 8 digits.
    package static let idWidth = 8

    /// The header row of the table.
    package static func header(_ layout: Layout) -> String {
        var cells: [String] = []
        if layout.numberWidth > 0 { cells.append(rightAligned("#", layout.numberWidth)) }
        cells += [
            TerminalWidth.padded("ID", to: idWidth), TerminalWidth.padded("NAME", to: layout.nameWidth),
            TerminalWidth.padded("START", to: 19), TerminalWidth.padded("END", to: 19), rightAligned("ELAPSED", elapsedWidth),
        ]
        if layout.phaseWidth > 0 { cells.append(TerminalWidth.padded("PHASE", to: layout.phaseWidth)) }
        if layout.deviceWidth > 0 { cells.append(TerminalWidth.padded("DEVICE", to: layout.deviceWidth)) }
        if layout.notes { cells.append("NOTE") }
        return trimmed(cells.joined(separator: "  "))
    }

    /// One row: `@N` (`number`; blank for one still counting), the id's first 8 digits,
    /// local times, `counting` for the end of an open interval, elapsed as H:MM:SS, the
    /// cycle phase when any row has one (`-` for the others), the device when there are
    /// several, the note.
    package static func row(_ interval: Interval, number: Int?, layout: Layout) -> String {
        var cells: [String] = []
        if layout.numberWidth > 0 { cells.append(rightAligned(number.map { "@\($0)" } ?? "", layout.numberWidth)) }
        let end = interval.endMs.map(localText) ?? "counting"
        cells += [
            TerminalWidth.padded(shortID(interval.id), to: idWidth), TerminalWidth.padded(shown(interval.name), to: layout.nameWidth),
            localText(interval.startMs), TerminalWidth.padded(end, to: 19),
            rightAligned(ElapsedText.string(milliseconds: interval.elapsedMs, tenths: false), elapsedWidth),
        ]
        if layout.phaseWidth > 0 { cells.append(TerminalWidth.padded(interval.phase.map(shown) ?? "-", to: layout.phaseWidth)) }
        if layout.deviceWidth > 0 { cells.append(TerminalWidth.padded(shown(interval.device), to: layout.deviceWidth)) }
        if layout.notes { cells.append(interval.note.map(shown) ?? "") }
        return trimmed(cells.joined(separator: "  "))
    }

    /// `0123456789abcdef` → `01234567`; `-` for an interval without an id (a daemon of an
    /// earlier release).
    package static func shortID(_ id: String) -> String {
        id.isEmpty ? "-" : String(shown(id).prefix(idWidth))
    }

    /// One interval on one line, as `track`, `amend`, `delete` and `undo` show it: the id's
    /// first 8 digits, the name, start and end in local time, the elapsed time and the note.
    package static func line(_ interval: Interval) -> String {
        var text = "\(shortID(interval.id)) \(shown(interval.name)) \(localText(interval.startMs)) to "
            + (interval.endMs.map(localText) ?? "now") + " (\(ElapsedText.string(milliseconds: interval.elapsedMs, tenths: false)))"
        if let phase = interval.phase { text += " in \(shown(phase))" }
        if let note = interval.note { text += " \"\(shown(note))\"" }
        return text
    }

    /// `ELAPSED` right-aligned over the usual values (up to `999:59:59`; a longer one
    /// pushes its row's later cells).
    private static let elapsedWidth = 9

    private static func rightAligned(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - TerminalWidth.of(text))) + text
    }

    private static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }

    /// A name (or note, or device) as the table shows it: control characters escaped, so
    /// that printing it cannot drive the terminal (CSV and JSON carry it as it is).
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
