import Dispatch
import StopWatchCore

/// The watchers of one stopwatch, served by a single subscription: an update reaches all of
/// them in one pass on the server's queue. (One subscription per watcher cost a dispatch per
/// watcher per tick; with 1,000 watchers that doubled the time for a tick to reach the last.)
///
/// A watcher added while the first state is still on its way gets it with the others; one
/// added later gets the newest state delivered so far at once, so every watcher sees the
/// states in store order, the current one first.
// Sendable without checks, so the subscription's sink can hold it weakly: every stored
// property is read and written only on `queue` (serial), where the sink delivers and where
// the registry that owns this fan-out calls it.
final class WatchFanOut: @unchecked Sendable {
    private var subscription: Subscription?
    private var latest: StopWatchSnapshot?
    private var watchers: [Int: (StopWatchSnapshot) -> Void] = [:]

    init(of useCase: StopWatchUseCase, on queue: DispatchQueue) {
        subscription = useCase.state.sink(on: queue) { [weak self] snapshot in
            self?.deliver(snapshot)
        }
    }

    var count: Int { watchers.count }

    func add(_ id: Int, _ receive: @escaping (StopWatchSnapshot) -> Void) {
        watchers[id] = receive
        if let latest { receive(latest) }
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

    private func deliver(_ snapshot: StopWatchSnapshot) {
        latest = snapshot
        for receive in watchers.values {
            receive(snapshot)
        }
    }
}
