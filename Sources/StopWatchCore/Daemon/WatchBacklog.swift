/// The updates of one watch that its socket has not taken yet, oldest first.
///
/// Only ticks merge (SPEC §3): a tick that comes while the previous tick still waits replaces
/// it, since a slow reader wants the newest elapsed time, not every one. Any other change
/// waits its turn, so every watcher sees the same changes in the same order; one that would
/// leave more than `limit` waiting means the watcher is too slow to be kept.
struct WatchBacklog {
    let limit: Int
    private var waiting: [(snapshot: StopWatchSnapshot, isTick: Bool)] = []
    /// Index of the oldest update still waiting: taking one is O(1), and the array is
    /// compacted only once it is drained.
    private var head = 0
    /// The update appended last, waiting or not: what tells a tick from a change.
    private var previous: StopWatchSnapshot?

    init(limit: Int) {
        self.limit = limit
    }

    var count: Int { waiting.count - head }
    var isEmpty: Bool { count == 0 }

    /// Queues `snapshot`; false when that would leave more than `limit` updates waiting.
    mutating func append(_ snapshot: StopWatchSnapshot) -> Bool {
        let isTick = previous.map { snapshot.isTick(following: $0) } ?? false
        previous = snapshot
        if isTick, count > 0, waiting[waiting.count - 1].isTick {
            waiting[waiting.count - 1].snapshot = snapshot
            return true
        }
        guard count < limit else { return false }
        waiting.append((snapshot, isTick))
        return true
    }

    /// The oldest update waiting, removed.
    mutating func removeFirst() -> StopWatchSnapshot? {
        guard head < waiting.count else { return nil }
        let first = waiting[head].snapshot
        head += 1
        if head == waiting.count { removeAll() }
        return first
    }

    /// Drops what waits; the next update is compared with the last one appended still.
    mutating func removeAll() {
        waiting.removeAll(keepingCapacity: waiting.count <= 64)
        head = 0
    }
}

extension StopWatchSnapshot {
    /// Whether this is `previous` a little later and nothing else: still counting from the
    /// same origin with the same laps, as a tick publishes it.
    func isTick(following previous: StopWatchSnapshot) -> Bool {
        state.isCounting && previous.state.isCounting && origin == previous.origin && laps == previous.laps
    }
}
