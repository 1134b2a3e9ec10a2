/// What `swctl report` prints: time per name, or per day and name, with totals. Rows of
/// names are sorted longest first, then by name (bytes); days oldest first.
package struct ReportTotals: Equatable, Sendable {
    package struct Row: Equatable, Sendable {
        package var name: String
        package var milliseconds: Int64
    }

    package struct Day: Equatable, Sendable {
        /// `2026-11-24`, local; for the parts of intervals too long to split by day, the days
        /// they span, `1970-01-01/9999-12-31` (`ReportAggregator`).
        package var day: String
        package var names: [Row]
        package var total: Int64
        /// The row of the parts too long to split by day, not a day.
        package var spansDays = false
    }

    /// One device's rows (`--by device`), or one cycle phase's (`--by phase`; label nil:
    /// the intervals of no phase).
    package struct Group: Equatable, Sendable {
        package var label: String?
        package var names: [Row]
        package var total: Int64
    }

    /// Per name over the whole range.
    package var names: [Row]
    /// Per day (only with `--by day`; empty otherwise).
    package var days: [Day]
    package var total: Int64
    /// Per device, or per phase, and name (only with `--by device` or `--by phase`; empty
    /// otherwise), longest first.
    package var groups: [Group] = []
}
