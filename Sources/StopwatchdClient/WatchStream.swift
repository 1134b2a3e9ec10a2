import StopwatchProtocol
import Varlink

/// The replies of one `Watch` call, read one at a time (blocking).
///
/// `@unchecked Sendable` is safe here: `next()` is meant for one thread at a time, and the
/// only call made from another thread, `interrupt()`, is a `shutdown(2)` of the socket (or,
/// through a bridge, an eventfd write that wakes its poll and a SIGTERM to its command under
/// the lock that also guards its reaping),
/// made under the connection's lock (never after it closed), which the kernel serializes
/// with the read it interrupts.
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
        try update(from: connection.receive())
    }

    /// The next update, or nil when none has come by `deadline` (`swctl wait --timeout`);
    /// the stream stays usable after a nil.
    package func nextUpdate(before deadline: ContinuousClock.Instant) throws(ClientError) -> WatchUpdate? {
        guard let reply = try connection.receive(before: deadline) else { return nil }
        return try update(from: reply)
    }

    /// The first update, `current`: the daemon's answer to the `Watch` call, waited for at
    /// most `timeout` as any call's answer is (`StopwatchClient.timeout`); none by then
    /// throws `.unreachable`. For a caller whose own deadline must not cut short that
    /// answer (`swctl wait --timeout 0s` on a countdown already expired).
    package func firstUpdate(within timeout: Duration) throws(ClientError) -> WatchUpdate {
        guard let update = try nextUpdate(before: ContinuousClock.now + timeout) else {
            throw connection.failure("no reply within \(DurationText.string(timeout))")
        }
        return update
    }

    private func update(from reply: VarlinkReply) throws(ClientError) -> WatchUpdate {
        let parameters = try reply.result(from: connection)
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
