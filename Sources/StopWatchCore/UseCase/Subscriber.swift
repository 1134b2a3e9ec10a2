import Dispatch
import LinuxSystem

/// One subscriber of a store: delivers states to its sink, in order, on its own serial queue.
final class Subscriber<State: Sendable>: Sendable {
    /// Serial even when the caller's queue is concurrent, so states arrive in order.
    private let deliveryQueue: DispatchQueue
    private let gate: Locked<Gate>
    /// Held for the whole of each call to the sink, so that `cancel` can wait for it. It counts
    /// the calls because it must hold something: see `Locked` on empty values.
    private let inFlight = Locked(0)

    private struct Gate {
        /// The sink; nil once cancelled, which also frees what it captured.
        var receive: (@Sendable (State) -> Void)?
        var deliveringThread: ThreadIdentity?
    }

    init(target: DispatchQueue, receive: @escaping @Sendable (State) -> Void) {
        self.deliveryQueue = DispatchQueue(label: "stopwatchd.subscriber", target: target)
        self.gate = Locked(Gate(receive: receive))
    }

    func enqueue(_ state: State) {
        deliveryQueue.async { self.deliver(state) }
    }

    private func deliver(_ state: State) {
        inFlight.withLock { deliveries in
            let receive = gate.withLock { gate in
                if gate.receive != nil { gate.deliveringThread = .current }
                return gate.receive
            }
            guard let receive else { return }
            deliveries += 1
            receive(state)
            gate.withLock { $0.deliveringThread = nil }
        }
    }

    /// After this returns nothing more reaches the sink, and — when `mayWait` — a delivery
    /// running on another thread has finished. It never waits for a delivery running on this
    /// thread (a sink cancelling itself), and the caller passes `mayWait: false` where waiting
    /// could deadlock (on the use case's own queue, which that delivery may be waiting for).
    func cancel(mayWait: Bool) {
        let (sink, deliveringElsewhere) = gate.withLock { gate in
            defer { gate.receive = nil }
            let here = gate.deliveringThread == .current
            return (gate.receive, !here)
        }
        if mayWait, deliveringElsewhere {
            inFlight.withLock { _ in }
        }
        // The sink and its captures are released here, outside both locks.
        _ = sink
    }
}
