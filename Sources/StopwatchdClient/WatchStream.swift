import StopwatchProtocol

/// The replies of one `Watch` call, read one at a time (blocking).
///
/// `@unchecked Sendable` is safe here: `next()` is meant for one thread at a time, and the
/// only call made from another thread, `interrupt()`, is a `shutdown(2)` of the socket made
/// under the connection's lock (never after it closed), which the kernel serializes with
/// the read it interrupts.
public final class WatchStream: @unchecked Sendable {
    private let connection: VarlinkConnection

    package init(connection: VarlinkConnection) {
        self.connection = connection
    }

    /// The next state. Throws when the daemon goes away or refuses the watch.
    public func next() throws(ClientError) -> Stopwatch {
        try nextUpdate().stopwatch
    }

    /// The next state and why it came (`current` first, then `tick`, `start`, `expired`, …).
    /// Throws when the daemon goes away or refuses the watch.
    public func nextUpdate() throws(ClientError) -> WatchUpdate {
        let parameters = try connection.receive().result(path: connection.path)
        do {
            return try WatchUpdate(json: parameters)
        } catch {
            throw .protocolViolation(error.reason)
        }
    }

    /// Makes a `next()` blocked on another thread throw: ends the watch.
    public func interrupt() {
        connection.interrupt()
    }

    /// Ends the watch and closes its connection: once done with it, and then no more `next()`.
    public func close() {
        connection.close()
    }
}
