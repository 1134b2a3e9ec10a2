import Dispatch

/// Holds a use case's current state and hands every change to its subscribers.
///
/// `update` is safe from any thread, including from inside a sink or a command handler.
/// Every subscriber receives states in the order they were stored; a state equal to the
/// current one is not stored, so nobody is told about it.
public final class Store<State: Equatable & Sendable>: Sendable {
    /// The serial queue the use case runs its command handler on. Schedule timers here and
    /// their events never interleave with a command.
    public let queue: DispatchQueue

    private let storage: Locked<Storage>
    /// Marks `queue` (and the queue it targets, if given) so that code can tell it runs there.
    private let onQueueKey = DispatchSpecificKey<Bool>()

    private struct Storage {
        var state: State
        var subscribers: [UInt64: Subscriber<State>] = [:]
        var nextSubscriberID: UInt64 = 0
    }

    init(_ initialState: State, queue: DispatchQueue, targetQueue: DispatchQueue?) {
        self.queue = queue
        self.storage = Locked(Storage(state: initialState))
        queue.setSpecific(key: onQueueKey, value: true)
        // A serial target runs `queue`'s work: waiting for `queue` from it deadlocks too.
        targetQueue?.setSpecific(key: onQueueKey, value: true)
    }

    /// Whether the caller runs on `queue` or on the queue it targets, where waiting for
    /// `queue` would deadlock.
    var isOnQueue: Bool {
        DispatchQueue.getSpecific(key: onQueueKey) == true
    }

    public var currentState: State {
        storage.withLock { $0.state }
    }

    /// Changes the state in place and returns what `body` returns.
    ///
    /// `body` runs under the store's lock: keep it short, and do not call back into this
    /// store from it (dispatching a command is fine: that only enqueues).
    @discardableResult
    public func update<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try storage.withLock { (storage) throws(Failure) -> Result in
            var state = storage.state
            let result = try body(&state)
            if state != storage.state {
                storage.state = state
                // Enqueued under the lock: every subscriber gets the states in store order.
                for subscriber in storage.subscribers.values {
                    subscriber.enqueue(state)
                }
            }
            return result
        }
    }

    func subscribe(on queue: DispatchQueue, _ receive: @escaping @Sendable (State) -> Void) -> Subscription {
        let subscriber = Subscriber(target: queue, receive: receive)
        let id = storage.withLock { storage in
            let id = storage.nextSubscriberID
            storage.nextSubscriberID += 1
            storage.subscribers[id] = subscriber
            subscriber.enqueue(storage.state)
            return id
        }
        return Subscription { [weak self] in
            _ = self?.storage.withLock { $0.subscribers.removeValue(forKey: id) }
            subscriber.cancel(mayWait: !(self?.isOnQueue ?? false))
        }
    }

    /// How many subscriptions are live.
    public var subscriberCount: Int {
        storage.withLock { $0.subscribers.count }
    }
}
