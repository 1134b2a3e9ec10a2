/// A live subscription to a use case's states. Keep it to cancel it later; dropping it
/// does not cancel it.
public final class Subscription: Sendable {
    private let cancelAction: @Sendable () -> Void

    init(cancel: @escaping @Sendable () -> Void) {
        self.cancelAction = cancel
    }

    /// Stops the deliveries and releases the sink. Once this returns, nothing more reaches the
    /// sink, and a delivery that was running on another thread has finished — unless this is
    /// called on the use case's own queue, where waiting for it could deadlock. Calling it
    /// again does nothing new. Two sinks that cancel each other at the same moment from
    /// different threads wait for each other: do not do that.
    public func cancel() {
        cancelAction()
    }
}
