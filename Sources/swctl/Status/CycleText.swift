import StopwatchProtocol

/// Where a cycle is, as `status`, `list` and `watch` show it: the phase's label and the
/// round, `focus 2/4` (of 4 rounds), `focus 2` for a cycle without end.
package enum CycleText {
    /// Nil for a stopwatch without a cycle. The label as the daemon sent it (printable is the
    /// caller's, as for names): a phase index out of range (a daemon that says so) reads `?`.
    package static func position(of stopwatch: Stopwatch) -> String? {
        guard let cycle = stopwatch.cycle else { return nil }
        return "\(cycle.currentLabel ?? "?") \(round(of: cycle))"
    }

    /// `2/4`, or `2` without end: `{round}` in a template.
    package static func round(of cycle: Stopwatch.Cycle) -> String {
        cycle.rounds.map { "\(cycle.round)/\($0)" } ?? "\(cycle.round)"
    }
}
