import StopwatchProtocol

/// How `swctl log` numbers its rows (SPEC §5): each ended interval shown gets the `@N` that
/// `amend`, `delete` and `LatestIntervalSearch` resolve it by, counted from the end of all
/// ended intervals, whatever `NAME` or `--until` narrow the table to. So the table reads the
/// unfiltered history from `--since` on (which holds every interval that ended after it): a
/// survey counts the ended ones, measures the columns of those shown and keeps them, up to
/// `Survey.keptRows`, with their place among the ended ones; the rows are numbered from
/// the count down once it is known. A table of more rows than that is read a second time
/// (`Counter`), so memory does not grow with the history. Filtering is done here, as the
/// daemon would do it (`shows`), not by the daemon: with a filter the numbers would count
/// only what it kept. Intervals still counting get no number: `@N` names ended ones only.
package struct LogNumbering {
    /// The stopwatch shown (nil: all), compared by bytes as the daemon compares names.
    package let name: String?
    /// `--until`: intervals that began at or after it are not shown.
    package let until: Int64?
    /// `--device`: the name of the device whose intervals are shown (nil: all), compared by
    /// bytes (`DevicesText.name(of:among:)` turns an id into it).
    package let device: String?

    package init(name: String?, until: Int64?, device: String? = nil) {
        self.name = name
        self.until = until
        self.device = device
    }

    /// Whether the table shows `interval` (what `History` with `name` and `until` returns
    /// of what it returns without them).
    package func shows(_ interval: Interval) -> Bool {
        if let name, !interval.name.utf8.elementsEqual(name.utf8) { return false }
        if let until, interval.startMs >= until { return false }
        if let device, !interval.device.utf8.elementsEqual(device.utf8) { return false }
        return true
    }

    /// The first reading: the ended intervals, and the columns of what is shown.
    package struct Survey: Equatable, Sendable {
        /// Ended intervals read, shown or not.
        package var ended = 0
        /// Intervals shown.
        package var shown = 0
        package var nameWidth = 4
        package var deviceWidth = 0
        package var notes = false
        /// Cells of the widest phase label shown; 0: no interval shown has a phase.
        package var phaseWidth = 0
        /// The first device seen, and whether another was.
        var device: String?
        var devices = false
        /// Whether the table has a DEVICE column: when the daemon's `Devices` says more than
        /// one device has history, or the rows span several anyway (another device's only
        /// interval still counting, in its `open.json`); nil (a daemon without `Devices`):
        /// when the rows span several.
        package var deviceColumn: Bool?
        /// The rows shown so far, each with its place among the ended intervals (1: the
        /// first read; nil for one still counting); nil once there were more than `keptRows`.
        package internal(set) var rows: [(interval: Interval, place: Int?)]? = []
        /// The most rows kept for one reading.
        package let keptRows: Int

        package init(keptRows: Int = 10_000) {
            self.keptRows = keptRows
        }

        package static func == (lhs: Survey, rhs: Survey) -> Bool {
            lhs.ended == rhs.ended && lhs.shown == rhs.shown && lhs.layout == rhs.layout
        }

        /// The rows kept with their `@N`, when all of them were kept; nil otherwise.
        package var numberedRows: [(interval: Interval, number: Int?)]? {
            rows.map { rows in rows.map { ($0.interval, $0.place.map { ended - $0 + 1 }) } }
        }

        /// The table's columns: the `@N` column as wide as the largest number.
        package var layout: LogText.Layout {
            LogText.Layout(
                numberWidth: max(1, "@\(ended)".count), nameWidth: nameWidth,
                deviceWidth: (deviceColumn == true || devices) ? max(deviceWidth, "DEVICE".count) : 0, notes: notes,
                phaseWidth: phaseWidth > 0 ? max(phaseWidth, "PHASE".count) : 0
            )
        }
    }

    package func survey(_ batch: [Interval], into survey: inout Survey) {
        for interval in batch {
            if interval.endMs != nil { survey.ended += 1 }
            guard shows(interval) else { continue }
            survey.shown += 1
            if survey.rows != nil {
                if survey.shown > survey.keptRows {
                    survey.rows = nil
                } else {
                    survey.rows?.append((interval, interval.endMs == nil ? nil : survey.ended))
                }
            }
            survey.nameWidth = max(survey.nameWidth, LogText.width(interval.name))
            survey.deviceWidth = max(survey.deviceWidth, LogText.width(interval.device))
            if interval.note != nil { survey.notes = true }
            if let phase = interval.phase { survey.phaseWidth = max(survey.phaseWidth, LogText.width(phase)) }
            // An interval that names no device (one still counting, a daemon of an earlier
            // release) is no second device.
            guard !interval.device.isEmpty else { continue }
            if survey.device == nil { survey.device = interval.device }
            if survey.device != interval.device { survey.devices = true }
        }
    }

    /// The second reading: numbers each interval read, counting down from the survey's count.
    package struct Counter: Sendable {
        /// Ended intervals still to come (by the survey's count), this one's included.
        private(set) var remaining: Int

        package init(ended: Int) {
            remaining = ended
        }

        /// The `@N` of `interval`, the next read (shown or not); nil for one still counting,
        /// or when the history has grown since the survey (numbers would no longer hold).
        package mutating func number(of interval: Interval) -> Int? {
            guard interval.endMs != nil else { return nil }
            defer { remaining -= 1 }
            return remaining >= 1 ? remaining : nil
        }

        /// Whether the rows read as many ended intervals as the survey counted.
        package var matchedSurvey: Bool { remaining == 0 }
    }
}
