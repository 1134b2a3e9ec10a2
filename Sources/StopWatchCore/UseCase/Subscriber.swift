import Dispatch
import LinuxSystem

/// One subscriber of a store: delivers states to its sink, in order, on its own serial queue.
///
/// States stored wait in `pending` until delivered, so that the sink's owner can take them
/// at once where it must (`deliverPending`), rather than after whatever else its queue has
/// to do first.
final class Subscriber<State: Sendable>: Sendable {
    /// Serial even when the caller's queue is concurrent, so states arrive in order.
    private let deliveryQueue: DispatchQueue
    private let gate: Locked<Gate>
    /// Held for the whole of each delivery run, so that `cancel` can wait for it and runs
    /// never overlap. It counts the runs because it must hold something: see `Locked` on
    /// empty values.
    private let inFlight = Locked(0)

    private struct Gate {
        /// The sink; nil once cancelled, which also frees what it captured.
        var receive: (@Sendable (State) -> Void)?
        var deliveringThread: ThreadIdentity?
        /// Stored, not yet delivered, oldest first from `head`: taking one is O(1), and the
        /// array is emptied once all are taken.
        var pending: [State] = []
        var head = 0

        var hasPending: Bool { head < pending.count }

        mutating func takeOldest() -> State {
            let state = pending[head]
            head += 1
            if head == pending.count {
                pending.removeAll(keepingCapacity: pending.count <= 64)
                head = 0
            }
            return state
        }
    }

    init(target: DispatchQueue, receive: @escaping @Sendable (State) -> Void) {
        self.deliveryQueue = DispatchQueue(label: "stopwatchd.subscriber", target: target)
        self.gate = Locked(Gate(receive: receive))
    }

    func enqueue(_ state: State) {
        let isFirst = gate.withLock { gate in
            guard gate.receive != nil else { return false }
            let isFirst = !gate.hasPending
            gate.pending.append(state)
            return isFirst
        }
        // One delivery run for all that waits: a later state joins the run on its way.
        if isFirst { deliveryQueue.async { self.deliverPending() } }
    }

    /// Delivers what is pending, oldest first, on the calling thread; nothing from inside
    /// the sink itself (the run in progress goes on with it).
    func deliverPending() {
        guard gate.withLock({ $0.deliveringThread != .current }) else { return }
        inFlight.withLock { runs in
            runs += 1
            while true {
                let next: (receive: @Sendable (State) -> Void, state: State)? = gate.withLock { gate in
                    guard let receive = gate.receive, gate.hasPending else { return nil }
                    gate.deliveringThread = .current
                    return (receive, gate.takeOldest())
                }
                guard let next else { return }
                next.receive(next.state)
                gate.withLock { $0.deliveringThread = nil }
            }
        }
    }

    /// After this returns nothing more reaches the sink, and — when `mayWait` — a delivery
    /// running on another thread has finished. It never waits for a delivery running on this
    /// thread (a sink cancelling itself), and the caller passes `mayWait: false` where waiting
    /// could deadlock (on the use case's own queue, which that delivery may be waiting for).
    func cancel(mayWait: Bool) {
        let (sink, deliveringElsewhere) = gate.withLock { gate in
            defer {
                gate.receive = nil
                gate.pending.removeAll()
                gate.head = 0
            }
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
