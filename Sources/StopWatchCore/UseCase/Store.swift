import Dispatch
import LinuxSystem

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
        /// Weak: the use case owns the handler (which captures this store), so that the two
        /// do not keep each other alive.
        weak var observationHandler: ObservationHandler?
        /// Held only between `whenObservationChanges` and the use case taking it over.
        var unclaimedObservationHandler: ObservationHandler?
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
            if storage.subscribers.count == 1 { notifyObservation(storage.observationHandler) }
            return id
        }
        return Subscription(cancel: { [weak self] in
            guard let self else { return }
            self.storage.withLock { storage in
                if storage.subscribers.removeValue(forKey: id) != nil, storage.subscribers.isEmpty {
                    self.notifyObservation(storage.observationHandler)
                }
            }
            subscriber.cancel(mayWait: !self.isOnQueue)
        }, deliverPending: {
            subscriber.deliverPending()
        })
    }

    /// Whether anyone subscribes to the states now.
    public var isObserved: Bool {
        storage.withLock { !$0.subscribers.isEmpty }
    }

    /// Calls `handler` on `queue` whenever the store gains its first subscriber or loses its
    /// last, so that work done only for subscribers (a tick timer) can start and stop with
    /// them. Read `isObserved` in it: calls may arrive after the next change. Set it from
    /// the configure closure; `handler` runs on `queue` only, like the command handler.
    public func whenObservationChanges(_ handler: @escaping () -> Void) {
        let observation = ObservationHandler(handler)
        storage.withLock {
            $0.observationHandler = observation
            $0.unclaimedObservationHandler = observation
        }
    }

    /// Hands the observation handler, if one was set, to its owner (the use case).
    func claimObservationHandler() -> ObservationHandler? {
        storage.withLock { storage in
            defer { storage.unclaimedObservationHandler = nil }
            return storage.unclaimedObservationHandler
        }
    }

    /// Enqueued under the lock, so the calls keep the order of the changes.
    private func notifyObservation(_ handler: ObservationHandler?) {
        guard let handler else { return }
        queue.async { handler.call() }
    }

    /// How many subscriptions are live.
    public var subscriberCount: Int {
        storage.withLock { $0.subscribers.count }
    }
}
