import StopWatchCore

/// Where the service makes a change durable before it replies: `StateStore` in the daemon,
/// an in-memory recorder in tests.
protocol StopwatchStorage: AnyObject {
    /// Writes stopwatch `name` as `snapshot`; nil deletes it.
    func save(_ name: String, _ snapshot: StopWatchSnapshot?)
}

extension StateStore: StopwatchStorage {}
