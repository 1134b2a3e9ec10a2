import Dispatch

/// The states of a use case, for whoever wants to follow them: with a sink on a queue,
/// or as an `AsyncSequence` (`for await state in useCase.state { … }`).
///
/// A new subscriber first receives the current state, then every change in store order.
public struct StatePublisher<State: Equatable & Sendable>: Sendable, AsyncSequence {
    public typealias Element = State
    public typealias Failure = Never

    let store: Store<State>

    /// The state now.
    public var current: State { store.currentState }

    /// Calls `receive` on `queue` with the current state, then with every change, until the
    /// returned subscription is cancelled. A concurrent `queue` still gets them one at a time,
    /// in order.
    @discardableResult
    public func sink(on queue: DispatchQueue, _ receive: @escaping @Sendable (State) -> Void) -> Subscription {
        store.subscribe(on: queue, receive)
    }

    /// The states as an `AsyncStream`; the subscription ends when the stream's consumer does.
    /// With a bounded policy a slow consumer skips states but never sees them out of order.
    public func values(
        bufferingPolicy: AsyncStream<State>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<State> {
        AsyncStream(bufferingPolicy: bufferingPolicy) { continuation in
            let subscription = sink(on: .global()) { continuation.yield($0) }
            continuation.onTermination = { _ in subscription.cancel() }
        }
    }

    public func makeAsyncIterator() -> AsyncStream<State>.Iterator {
        values().makeAsyncIterator()
    }
}
