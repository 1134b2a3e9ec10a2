import StopWatchCore

/// Where the service makes a change durable before it replies: `StateStore` in the daemon,
/// an in-memory recorder in tests.
protocol StopwatchStorage: AnyObject {
    /// Writes stopwatch `name` as `snapshot`; nil deletes it.
    func save(_ name: String, _ snapshot: StopWatchSnapshot?)
    /// Writes stopwatches `names` as they are then, in a later turn of the queue: after what
    /// this turn tells (an expiry's watchers, at its instant, wait for no disk; the outbox
    /// holds it as told meanwhile).
    func saveSoon(_ names: [String])
}

extension StateStore: StopwatchStorage {}
