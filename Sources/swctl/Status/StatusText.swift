import StopwatchProtocol

/// The human output of `swctl status` and `swctl list`.
package enum StatusText {
    /// The stopwatch on one line (`default counting 0:01:23 (3 laps)`), then one line per
    /// lap: its split time and how long it took since the previous one.
    package static func lines(for stopwatch: Stopwatch, tenths: Bool) -> [String] {
        let tenths = tenths || RemainingText.needsTenths(stopwatch)
        let laps = stopwatch.lapsMs
        let numberWidth = String(laps.count).count
        let splits = laps.map { ElapsedText.string(milliseconds: $0, tenths: tenths) }
        let splitWidth = splits.map(\.count).max() ?? 0
        var lines = [summary(of: stopwatch, tenths: tenths)]
        for (index, lapMs) in laps.enumerated() {
            let previousMs = index == 0 ? 0 : laps[index - 1]
            // Laps come from the daemon: a difference that overflows reads as zero.
            let (differenceMs, overflow) = lapMs.subtractingReportingOverflow(previousMs)
            let difference = ElapsedText.string(milliseconds: overflow ? 0 : differenceMs, tenths: tenths)
            let number = padded(String(index + 1), to: numberWidth, alignment: .right)
            let split = padded(splits[index], to: splitWidth, alignment: .right)
            lines.append("  lap \(number)  \(split)  (+\(difference))")
        }
        return lines
    }

    /// `(2 laps cleared)`, `(1 lap cleared)`: what `timer` says after the summary when the
    /// countdown cleared laps; nil for none.
    package static func lapsClearedNote(_ count: Int) -> String? {
        guard count > 0 else { return nil }
        return "(\(count) lap\(count == 1 ? "" : "s") cleared)"
    }

    /// A table of `stopwatches`, one row each under a `NAME STATE ELAPSED LAPS` header; times
    /// and counts are right-aligned so their digits line up, and columns are measured in
    /// terminal cells, so a name in CJK does not push its row out of line. When any is a countdown, a
    /// `REMAINING` column comes before `LAPS` (`0:03:59`, `+0:00:12` in overtime, `-` for a
    /// plain stopwatch, so that every row has as many words); a list without countdowns
    /// keeps the table it always had. When any runs a cycle, a `PHASE` column follows
    /// (`focus 2/4`, `-` for the others).
    package static func table(_ stopwatches: [Stopwatch], tenths: Bool) -> [String] {
        guard !stopwatches.isEmpty else { return ["no stopwatches"] }
        let countdowns = stopwatches.contains { $0.targetMs != nil }
        let cycles = stopwatches.contains { $0.cycle != nil }
        // One form for the whole table, so that the columns line up.
        let tenths = tenths || stopwatches.contains(where: RemainingText.needsTenths)
        let header = ["NAME", "STATE", "ELAPSED"] + (countdowns ? ["REMAINING"] : []) + (cycles ? ["PHASE"] : []) + ["LAPS"]
        let alignments: [Alignment] = [.left, .left, .right] + (countdowns ? [.right] : []) + (cycles ? [.left] : []) + [.right]
        let rows = stopwatches.map { stopwatch in
            [StopwatchName.printable(stopwatch.name), stateWord(stopwatch.state), ElapsedText.string(milliseconds: stopwatch.elapsedMs, tenths: tenths)]
                + (countdowns ? [RemainingText.string(for: stopwatch, tenths: tenths) ?? "-"] : [])
                + (cycles ? [CycleText.position(of: stopwatch).map(StopwatchName.printable) ?? "-"] : [])
                + [String(stopwatch.lapsMs.count)]
        }
        let widths = header.indices.map { column in
            ([header] + rows).map { TerminalWidth.of($0[column]) }.max() ?? 0
        }
        return ([header] + rows).map { cells in
            cells.indices
                .map { padded(cells[$0], to: widths[$0], alignment: alignments[$0]) }
                .joined(separator: "  ")
        }
    }

    /// `default counting 0:01:23`, with ` (3 laps)` when there are laps, ` (skips sleep)` for
    /// one that counts only time awake, and the note of the interval counting, quoted. A countdown shows
    /// the time left instead, and its target: `tea counting 0:03:59 left of 0:04:00`, then
    /// `tea counting +0:00:12 over 0:04:00`. A cycle says its phase and round after the time:
    /// `pomo counting 0:24:59 left of 0:25:00 in focus 2/4`.
    static func summary(of stopwatch: Stopwatch, tenths: Bool) -> String {
        let time: String
        if let remaining = RemainingText.string(for: stopwatch, tenths: tenths),
            let target = RemainingText.target(of: stopwatch, tenths: tenths)
        {
            time = "\(remaining) \(remaining.hasPrefix("+") ? "over" : "left of") \(target)"
        } else {
            time = ElapsedText.string(milliseconds: stopwatch.elapsedMs, tenths: tenths)
        }
        // Printable: the name comes from the daemon, which another program may play, and
        // a control character in it could move the terminal's cursor.
        var text = "\(StopwatchName.printable(stopwatch.name)) \(stateWord(stopwatch.state)) \(time)"
        if let position = CycleText.position(of: stopwatch) { text += " in \(StopwatchName.printable(position))" }
        // Remarks in one pair of parentheses: laps, and a clock that leaves sleep out (the
        // default, counting it, goes unsaid).
        var remarks: [String] = []
        if !stopwatch.lapsMs.isEmpty { remarks.append(lapCount(stopwatch.lapsMs.count)) }
        if !stopwatch.countsSleep { remarks.append("skips sleep") }
        if !remarks.isEmpty { text += " (\(remarks.joined(separator: ", ")))" }
        if let note = stopwatch.note { text += " \"\(StopwatchName.printable(note))\"" }
        return text
    }

    /// The state in words for people: the wire says `pause`, a person reads `paused`.
    static func stateWord(_ state: Stopwatch.State) -> String {
        switch state {
        case .stopped: "stopped"
        case .counting: "counting"
        case .pause: "paused"
        }
    }

    /// `1 lap`, `2 laps`.
    static func lapCount(_ count: Int) -> String {
        count == 1 ? "1 lap" : "\(count) laps"
    }

    enum Alignment { case left, right }

    /// `text` with spaces up to `width` terminal cells (`TerminalWidth`).
    static func padded(_ text: String, to width: Int, alignment: Alignment) -> String {
        let padding = String(repeating: " ", count: max(0, width - TerminalWidth.of(text)))
        return alignment == .left ? text + padding : padding + text
    }
}
