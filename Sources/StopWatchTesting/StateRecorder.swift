import LinuxSystem
import Dispatch
import StopWatchCore

/// Subscribes to a use case's states and keeps every one it receives, for tests to inspect.
///
/// Deliveries are asynchronous: wait for the states you expect with `wait(until:)`, which
/// gives up after a deadline instead of sleeping a fixed time. To show that something was
/// *not* delivered, make one more change afterwards and wait for that one.
public final class StateRecorder<State: Equatable & Sendable>: Sendable {
    private let received = Locked<[State]>([])
    private let arrivals = DispatchSemaphore(value: 0)
    private let subscription: Locked<Subscription?> = Locked(nil)

    public init(_ publisher: StatePublisher<State>, on queue: DispatchQueue = DispatchQueue(label: "StateRecorder")) {
        let subscription = publisher.sink(on: queue) { [weak self] in self?.record($0) }
        self.subscription.withLock { $0 = subscription }
    }

    private func record(_ state: State) {
        received.withLock { $0.append(state) }
        arrivals.signal()
    }

    /// The states received so far, oldest first.
    public var states: [State] {
        received.withLock { $0 }
    }

    /// Waits until `condition` holds for the states received, or `timeout` passes.
    /// Returns whether it holds.
    @discardableResult
    public func wait(timeout: Duration = .seconds(10), until condition: ([State]) -> Bool) -> Bool {
        let deadline = DispatchTime.now() + .nanoseconds(Int(timeout.nanoseconds))
        while !condition(states) {
            if arrivals.wait(timeout: deadline) == .timedOut {
                return condition(states)
            }
        }
        return true
    }

    /// Waits until the last state received equals `state`.
    @discardableResult
    public func wait(timeout: Duration = .seconds(10), forLast state: State) -> Bool {
        wait(timeout: timeout) { $0.last == state }
    }

    public func cancel() {
        subscription.withLock { $0 }?.cancel()
    }
}
