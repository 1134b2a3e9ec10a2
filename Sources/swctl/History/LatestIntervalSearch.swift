import StopwatchProtocol
import StopwatchdClient

/// Finds `@N`, the Nth latest ended interval of all (SPEC §5), without reading the whole
/// history for `@1`: it streams `History` over a window that widens (the last day, 7 days,
/// 31, 366, then all of it) until the window holds N ended intervals.
///
/// `History` returns the intervals overlapping [since, …), in the order they ended: every
/// interval that ended after `since` is in it, so once a window holds N ended intervals its
/// Nth from the end is the Nth of all. Memory holds at most `kept` intervals: past that, the
/// window that holds N is read a second time to take the one at its place.
package struct LatestIntervalSearch {
    /// Which one: 1 the latest.
    package let count: Int
    /// The most intervals kept while reading a window.
    package let kept: Int

    /// The windows, in days before now; nil: the whole history.
    package static let windowDays: [Int64?] = [1, 7, 31, 366, nil]

    package init(count: Int, kept: Int = 10_000) {
        self.count = count
        self.kept = max(1, kept)
    }

    /// The `since_ms` of each window against `now`, narrowest first (nil: the whole history).
    package static func windows(now: Int64) -> [Int64?] {
        windowDays.map { days in days.map { max(0, now - $0 * 86_400_000) } }
    }

    /// What came of a search.
    package enum Outcome: Equatable, Sendable {
        case found(Interval)
        /// The whole history holds only `ended` ended intervals (fewer than `count`).
        case tooFew(ended: Int)
    }

    /// Searches the history `open(since)` reads, `now` being the current time; each reading
    /// is closed once done with.
    package func run(now: Int64, open: (Int64?) throws(ClientError) -> HistoryReading) throws(ClientError) -> Outcome {
        var ended = 0
        for since in Self.windows(now: now) {
            let reading = try open(since)
            // The last `min(count, kept)` ended intervals, in a ring.
            var ring = Ring(capacity: min(count, kept))
            ended = 0
            do {
                defer { reading.close() }
                while let batch = try reading.next() {
                    for interval in batch where interval.endMs != nil {
                        ended += 1
                        ring.append(interval)
                    }
                }
            }
            guard ended >= count else { continue }
            if count <= ring.capacity { return .found(ring.fromEnd(count)) }
            // Too far back to have kept: the same window again, to the place it had.
            let again = try open(since)
            defer { again.close() }
            var place = 0
            let wanted = ended - count + 1
            while let batch = try again.next() {
                for interval in batch where interval.endMs != nil {
                    place += 1
                    if place == wanted { return .found(interval) }
                }
            }
            // The history shrank between the two readings: as good as too few now.
            return .tooFew(ended: place)
        }
        return .tooFew(ended: ended)
    }

    /// A fixed number of the latest elements appended.
    struct Ring {
        let capacity: Int
        private var items: [Interval] = []
        private var next = 0

        init(capacity: Int) {
            self.capacity = capacity
        }

        mutating func append(_ interval: Interval) {
            if items.count < capacity {
                items.append(interval)
            } else {
                items[next] = interval
            }
            next = (next + 1) % capacity
        }

        /// The `place`th latest (1: the last appended); `place` ≤ what was appended, ≤ capacity.
        func fromEnd(_ place: Int) -> Interval {
            items[(next - place + capacity) % capacity]
        }
    }
}
