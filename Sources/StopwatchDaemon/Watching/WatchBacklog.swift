import StopWatchCore
import StopwatchProtocol

/// The updates of one watch that its socket has not taken yet, oldest first.
///
/// Only ticks merge (SPEC §3): a tick that comes while the previous tick still waits replaces
/// it, since a slow reader wants the newest elapsed time, not every one. Any other event
/// waits its turn, so every watcher sees the same events in the same order; one that would
/// leave more than `limit` events waiting (ticks, at most one between two events, are not
/// counted) means the watcher is too slow to be kept. So does one whose waiting updates
/// hold more than `lapLimit` laps in all: each lap's snapshot has a list of its own, so a
/// count alone would not bound the memory.
struct WatchBacklog {
    typealias Update = (snapshot: StopWatchSnapshot, event: WatchEvent)

    let limit: Int
    let lapLimit: Int
    private var waiting: [Update] = []
    private var events = 0
    private var laps = 0
    /// Index of the oldest update still waiting: taking one is O(1), and the array is
    /// compacted only once it is drained.
    private var head = 0

    /// - Parameter lapLimit: default: 256 laps an event that may wait (4 KiB of them).
    init(limit: Int, lapLimit: Int? = nil) {
        self.limit = limit
        self.lapLimit = lapLimit ?? limit.multipliedReportingOverflow(by: 256).partialValue
    }

    var count: Int { waiting.count - head }
    var isEmpty: Bool { count == 0 }

    /// Queues an update; false when that would leave too much waiting.
    mutating func append(_ snapshot: StopWatchSnapshot, _ event: WatchEvent) -> Bool {
        let isTick = event == .tick
        if isTick, count > 0, waiting[waiting.count - 1].event == .tick {
            // Same laps as the tick it replaces: the counts stay.
            waiting[waiting.count - 1].snapshot = snapshot
            return true
        }
        let newEvents = events + (isTick ? 0 : 1)
        let newLaps = laps + snapshot.laps.count
        guard newEvents <= limit, newLaps <= lapLimit || isEmpty else { return false }
        waiting.append((snapshot, event))
        events = newEvents
        laps = newLaps
        return true
    }

    /// The oldest update waiting, removed.
    mutating func removeFirst() -> Update? {
        guard head < waiting.count else { return nil }
        let first = waiting[head]
        head += 1
        if first.event != .tick { events -= 1 }
        laps -= first.snapshot.laps.count
        if head == waiting.count { removeAll() }
        return first
    }

    /// Drops what waits.
    mutating func removeAll() {
        waiting.removeAll(keepingCapacity: waiting.count <= 64)
        head = 0
        events = 0
        laps = 0
    }
}
