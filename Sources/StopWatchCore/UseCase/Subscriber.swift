import Dispatch
import Glibc

/// One subscriber of a store: delivers states to its sink, in order, on its own serial queue.
final class Subscriber<State: Sendable>: Sendable {
    /// Serial even when the caller's queue is concurrent, so states arrive in order.
    private let deliveryQueue: DispatchQueue
    private let receive: @Sendable (State) -> Void
    private let gate = Locked(Gate())
    /// Held for the whole of each call to `receive`, so that `cancel` can wait for it. It counts
    /// the calls because it must hold something: see `Locked` on empty values.
    private let inFlight = Locked(0)

    private struct Gate {
        var isCancelled = false
        var deliveringThread: pthread_t?
    }

    init(target: DispatchQueue, receive: @escaping @Sendable (State) -> Void) {
        self.deliveryQueue = DispatchQueue(label: "stopwatchd.subscriber", target: target)
        self.receive = receive
    }

    func enqueue(_ state: State) {
        deliveryQueue.async { self.deliver(state) }
    }

    private func deliver(_ state: State) {
        inFlight.withLock { deliveries in
            let shouldDeliver = gate.withLock { gate in
                guard !gate.isCancelled else { return false }
                gate.deliveringThread = pthread_self()
                return true
            }
            guard shouldDeliver else { return }
            deliveries += 1
            receive(state)
            gate.withLock { $0.deliveringThread = nil }
        }
    }

    /// After this returns, `receive` is not running and will not be called again — except
    /// when called from inside `receive` itself, which cannot wait for its own return.
    func cancel() {
        let mustWait = gate.withLock { gate in
            gate.isCancelled = true
            guard let thread = gate.deliveringThread else { return true }
            return pthread_equal(thread, pthread_self()) == 0
        }
        if mustWait {
            inFlight.withLock { _ in }
        }
    }
}
