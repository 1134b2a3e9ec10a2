/// A live subscription to a use case's states. Keep it to cancel it later; dropping it
/// does not cancel it.
public final class Subscription: Sendable {
    private let cancelAction: @Sendable () -> Void
    private let deliverAction: @Sendable () -> Void

    init(cancel: @escaping @Sendable () -> Void, deliverPending: @escaping @Sendable () -> Void) {
        self.cancelAction = cancel
        self.deliverAction = deliverPending
    }

    /// Delivers to the sink at once, on the calling thread, the states stored but not yet
    /// delivered, in order. Call it on the queue the sink runs on, when what comes next must
    /// come after them (before cancelling and subscribing elsewhere, say); from inside the
    /// sink it does nothing (the delivery in progress goes on with them).
    public func deliverPending() {
        deliverAction()
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
