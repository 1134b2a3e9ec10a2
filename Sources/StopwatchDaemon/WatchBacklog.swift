import StopWatchCore

/// The updates of one watch that its socket has not taken yet, oldest first.
///
/// Only ticks merge (SPEC §3): a tick that comes while the previous tick still waits replaces
/// it, since a slow reader wants the newest elapsed time, not every one. Any other change
/// waits its turn, so every watcher sees the same changes in the same order; one that would
/// leave more than `limit` changes waiting (ticks, at most one between two changes, are not
/// counted) means the watcher is too slow to be kept. So does one whose waiting updates
/// hold more than `lapLimit` laps in all: each lap's snapshot has a list of its own, so a
/// count alone would not bound the memory.
struct WatchBacklog {
    let limit: Int
    let lapLimit: Int
    private var waiting: [(snapshot: StopWatchSnapshot, isTick: Bool)] = []
    private var changes = 0
    private var laps = 0
    /// Index of the oldest update still waiting: taking one is O(1), and the array is
    /// compacted only once it is drained.
    private var head = 0
    /// The update appended last, waiting or not: what tells a tick from a change.
    private var previous: StopWatchSnapshot?

    /// - Parameter lapLimit: default: 256 laps a change that may wait (4 KiB of them).
    init(limit: Int, lapLimit: Int? = nil) {
        self.limit = limit
        self.lapLimit = lapLimit ?? limit.multipliedReportingOverflow(by: 256).partialValue
    }

    var count: Int { waiting.count - head }
    var isEmpty: Bool { count == 0 }

    /// Queues `snapshot`; false when that would leave too much waiting.
    mutating func append(_ snapshot: StopWatchSnapshot) -> Bool {
        let isTick = previous.map { snapshot.isTick(following: $0) } ?? false
        previous = snapshot
        if isTick, count > 0, waiting[waiting.count - 1].isTick {
            // Same laps as the tick it replaces: the counts stay.
            waiting[waiting.count - 1].snapshot = snapshot
            return true
        }
        let newChanges = changes + (isTick ? 0 : 1)
        let newLaps = laps + snapshot.laps.count
        guard newChanges <= limit, newLaps <= lapLimit || isEmpty else { return false }
        waiting.append((snapshot, isTick))
        changes = newChanges
        laps = newLaps
        return true
    }

    /// The oldest update waiting, removed.
    mutating func removeFirst() -> StopWatchSnapshot? {
        guard head < waiting.count else { return nil }
        let first = waiting[head]
        head += 1
        if !first.isTick { changes -= 1 }
        laps -= first.snapshot.laps.count
        if head == waiting.count { removeAll() }
        return first.snapshot
    }

    /// Drops what waits; the next update is compared with the last one appended still.
    mutating func removeAll() {
        waiting.removeAll(keepingCapacity: waiting.count <= 64)
        head = 0
        changes = 0
        laps = 0
    }
}

extension StopWatchSnapshot {
    /// Whether this is `previous` a little later and nothing else: still counting from the
    /// same origin with the same laps, as a tick publishes it.
    func isTick(following previous: StopWatchSnapshot) -> Bool {
        state.isCounting && previous.state.isCounting && origin == previous.origin && laps == previous.laps
    }
}
