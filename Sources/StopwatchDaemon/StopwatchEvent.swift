import StopwatchProtocol

/// Something that happened to a stopwatch (anything but a tick), as hooks learn of it:
/// the `Watch` reply its watchers got, and for an expiry how late it is delivered.
struct StopwatchEvent: Equatable, Sendable {
    var update: WatchUpdate
    /// How long after the instant it fell an expiry is delivered: next to nothing while the
    /// daemon runs, the time it was down after a restart. Zero for every other event.
    var late: Duration = .zero

    var name: String { update.stopwatch.name }
    var event: WatchEvent { update.event }
}
