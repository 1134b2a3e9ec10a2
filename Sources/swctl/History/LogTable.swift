import StopwatchProtocol
import StopwatchdClient

/// `swctl log`'s table, numbered as `@N` resolves (`LogNumbering`): the history from
/// `--since` is read once to count and measure, and, when it holds more rows than the survey
/// keeps, a second time to print them, so memory does not grow with the history.
package struct LogTable {
    package let numbering: LogNumbering
    /// The most rows the first reading keeps (past that, a second reading prints them).
    package let keptRows: Int
    /// Whether to show the DEVICE column (more than one device has history); nil: when the
    /// rows span several devices (`LogNumbering.Survey.deviceColumn`).
    package let deviceColumn: Bool?

    package init(numbering: LogNumbering, keptRows: Int = 10_000, deviceColumn: Bool? = nil) {
        self.numbering = numbering
        self.keptRows = keptRows
        self.deviceColumn = deviceColumn
    }

    /// What a second reading that counted other ended intervals than the first says on
    /// standard error (its rows' numbers may be off).
    package static let changedWarning = "swctl: the history changed while log read it, so its @N numbers may be off; run it again before using them"

    /// Reads `open()` once or twice (each reading is the unfiltered history from `--since`),
    /// `write`s the table a batch of rows at a time, and `warn`s when the history changed
    /// between the two readings. Writes nothing when no row is shown.
    package func print(
        open: () throws(ClientError) -> HistoryReading, write: (String) -> Void, warn: (String) -> Void
    ) throws(ClientError) {
        var survey = LogNumbering.Survey(keptRows: keptRows)
        survey.deviceColumn = deviceColumn
        do {
            let first = try open()
            defer { first.close() }
            while let batch = try first.next() { numbering.survey(batch, into: &survey) }
        }
        guard survey.shown > 0 else { return }
        let layout = survey.layout
        if let rows = survey.numberedRows {
            // All kept: one reading was enough.
            write(([LogText.header(layout)] + rows.map { LogText.row($0.interval, number: $0.number, layout: layout) }).map { $0 + "\n" }.joined())
            return
        }
        var counter = LogNumbering.Counter(ended: survey.ended)
        let rows = try open()
        defer { rows.close() }
        write(LogText.header(layout) + "\n")
        while let batch = try rows.next() {
            var text = ""
            for interval in batch {
                let number = counter.number(of: interval)
                if numbering.shows(interval) { text += LogText.row(interval, number: number, layout: layout) + "\n" }
            }
            if !text.isEmpty { write(text) }
        }
        if !counter.matchedSurvey { warn(Self.changedWarning) }
    }
}
