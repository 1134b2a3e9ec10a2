/// A monotonic clock for stopwatches: a reading is the time since some fixed, arbitrary
/// moment. Only differences between readings of the same clock mean anything.
public protocol StopWatchClock: Sendable {
    func now() -> Duration
}
