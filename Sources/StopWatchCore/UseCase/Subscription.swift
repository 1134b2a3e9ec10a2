/// A live subscription to a use case's states. Keep it to cancel it later; dropping it
/// does not cancel it.
public final class Subscription: Sendable {
    private let cancelAction: @Sendable () -> Void

    init(cancel: @escaping @Sendable () -> Void) {
        self.cancelAction = cancel
    }

    /// Stops the deliveries. Once this returns, nothing more reaches the sink, and a delivery
    /// that was running on another thread has finished. Calling it again does nothing new.
    public func cancel() {
        cancelAction()
    }
}
