import StopwatchProtocol

/// Something that happened to a stopwatch (anything but a tick), as hooks learn of it:
/// the `Watch` reply its watchers got, and for an expiry how late it is delivered.
struct StopwatchEvent: Equatable, Sendable {
    var update: WatchUpdate
    /// How long after the instant it fell an expiry is delivered: next to nothing while the
    /// daemon runs, the time it was down after a restart. For any other event, zero, but
    /// for one whose hooks waited in the outbox across a restart: the time since it happened.
    var late: Duration = .zero
    /// For an event that ended a counting interval (a stop, a remove): that interval's note,
    /// which the stopwatch after it no longer shows. A hook gets it as `STOPWATCHD_NOTE`.
    var endedNote: String?

    var name: String { update.stopwatch.name }
    var event: WatchEvent { update.event }
}

/// An expiry told: which countdown, and the instant it fell on the boot clock, to the
/// nanosecond. With the boot it was told in, it names that expiry and no other: a countdown
/// set again, resumed or retargeted since has another instant.
struct ToldExpiry: Equatable, Sendable {
    var name: String
    var instant: Duration
}

/// What one turn of the server's queue tells beyond the watchers: the events hooks run
/// for, and the expiries among them. `EventOutbox` records it before anyone hears of it.
struct EventBatch: Sendable {
    var events: [StopwatchEvent] = []
    var expiries: [ToldExpiry] = []

    var isEmpty: Bool { events.isEmpty && expiries.isEmpty }
}
