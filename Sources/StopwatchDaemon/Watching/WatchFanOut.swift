import Dispatch
import StopWatchCore
import StopwatchProtocol

/// The watchers of one stopwatch, served by a single subscription: an update reaches all of
/// them in one pass on the server's queue. (One subscription per watcher cost a dispatch per
/// watcher per tick, which delayed a tick's reaching the last of many watchers.)
///
/// Each update goes out with its event, told once here from the state before it. A watcher
/// added while the first state is still on its way gets it with the others; one added later
/// gets the newest state delivered so far at once, so every watcher sees the states in store
/// order, the current one first.
// Sendable without checks, so the subscription's sink can hold it weakly: every stored
// property is read and written only on `queue` (serial), where the sink delivers and where
// the registry that owns this fan-out calls it.
final class WatchFanOut: @unchecked Sendable {
    typealias Receive = (StopWatchSnapshot, WatchEvent) -> Void

    private let queue: DispatchQueue
    private var subscription: Subscription?
    private var latest: StopWatchSnapshot?
    private var watchers: [Int: Receive] = [:]

    init(of useCase: StopWatchUseCase, on queue: DispatchQueue) {
        self.queue = queue
        subscribe(to: useCase)
    }

    var count: Int { watchers.count }

    func add(_ id: Int, _ receive: @escaping Receive) {
        watchers[id] = receive
        if let latest { receive(latest, .current) }
    }

    /// Removes a watcher; the last one gone ends the subscription (and so the ticks, when
    /// nobody else watches).
    func remove(_ id: Int) {
        watchers[id] = nil
        if watchers.isEmpty {
            subscription?.cancel()
            subscription = nil
        }
    }

    /// Delivers now, on the queue, the states stored for the watchers and still on their way
    /// (`Subscription.deliverPending`): what would otherwise reach them in a later turn.
    func deliverPending() {
        subscription?.deliverPending()
    }

    /// The stopwatch was removed and `successor`, never started, takes its name: the watchers
    /// get the changes still on their way first (a Stop served in the same turn), then are
    /// told `removed` with the successor, then follow it.
    func removed(replacedBy successor: StopWatchUseCase) {
        // A watcher may leave during either (its client gone, a write fails): the last one
        // out ends the subscription, as `remove` does.
        subscription?.deliverPending()
        subscription?.cancel()
        subscription = nil
        let fresh = successor.state.current
        latest = fresh
        for receive in watchers.values { receive(fresh, .removed) }
        if !watchers.isEmpty { subscribe(to: successor) }
    }

    private func subscribe(to useCase: StopWatchUseCase) {
        subscription = useCase.state.sink(on: queue) { [weak self] snapshot in
            self?.deliver(snapshot)
        }
    }

    private func deliver(_ snapshot: StopWatchSnapshot) {
        // A new subscription's first state is the one the watchers have already.
        guard snapshot != latest else { return }
        let event = latest.map { WatchEvent(from: $0, to: snapshot) } ?? .current
        latest = snapshot
        for receive in watchers.values {
            receive(snapshot, event)
        }
    }
}
