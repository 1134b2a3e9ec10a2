import StopWatchCore
@testable import StopwatchDaemon
import Testing

/// What waits for a watcher that reads slowly: ticks merge, changes never do (SPEC §3).
@Suite("watch backlog")
struct WatchBacklogTests {
    static let origin = Duration.seconds(100)

    static func counting(at now: Duration, laps: [Duration] = []) -> StopWatchSnapshot {
        .counting(since: origin, laps: laps, now: now)
    }

    /// Appends each in turn; whether the backlog took them all.
    func append(_ snapshots: [StopWatchSnapshot], to backlog: inout WatchBacklog) -> Bool {
        snapshots.allSatisfy { backlog.append($0) }
    }

    func drained(_ backlog: inout WatchBacklog) -> [StopWatchSnapshot] {
        var taken: [StopWatchSnapshot] = []
        while let next = backlog.removeFirst() { taken.append(next) }
        return taken
    }

    /// `count` toggles of a stopwatch, one a second: each a change.
    static func toggles(_ count: Int, from start: StopWatchSnapshot = .stopped) -> [StopWatchSnapshot] {
        var snapshot = start
        return (1...count).map { second in
            snapshot = try! snapshot.applying(.toggle, at: origin + .seconds(second))
            return snapshot
        }
    }

    @Test("ticks waiting in a row merge into the newest")
    func ticksMerge() {
        var backlog = WatchBacklog(limit: 10)
        let start = Self.counting(at: Self.origin)
        let ticks = (1...50).map { Self.counting(at: Self.origin + .seconds($0)) }
        let accepted = append([start] + ticks, to: &backlog)
        #expect(accepted)
        // The start is a change; the fifty ticks after it are one, the newest.
        #expect(drained(&backlog) == [start, ticks.last!])
    }

    @Test("changes never merge: every one waits, in order")
    func changesKept() {
        var backlog = WatchBacklog(limit: 100)
        let changes = Self.toggles(20)
        let accepted = append(changes, to: &backlog)
        #expect(accepted)
        #expect(backlog.count == 20)
        #expect(drained(&backlog) == changes)
    }

    @Test("a lap is a change even while counting from the same origin")
    func lapIsAChange() {
        var backlog = WatchBacklog(limit: 10)
        let before = Self.counting(at: Self.origin + .seconds(1))
        let lap = Self.counting(at: Self.origin + .seconds(2), laps: [.seconds(2)])
        let tick = Self.counting(at: Self.origin + .seconds(3), laps: [.seconds(2)])
        let accepted = append([before, lap, tick], to: &backlog)
        #expect(accepted)
        #expect(drained(&backlog) == [before, lap, tick])
    }

    @Test("a tick after a change already written waits as a tick, and merges with the next")
    func tickAfterWrittenChange() {
        var backlog = WatchBacklog(limit: 10)
        let start = Self.counting(at: Self.origin)
        let accepted = append([start], to: &backlog)
        #expect(accepted && backlog.removeFirst() == start)
        let ticks = [Self.counting(at: Self.origin + .seconds(1)), Self.counting(at: Self.origin + .seconds(2))]
        let acceptedTicks = append(ticks, to: &backlog)
        #expect(acceptedTicks)
        #expect(drained(&backlog) == [ticks[1]])
    }

    @Test("over the limit: refused, what waits is unchanged, and room comes back as it drains")
    func limit() {
        var backlog = WatchBacklog(limit: 3)
        let changes = Self.toggles(5)
        let acceptedThree = append(Array(changes[..<3]), to: &backlog)
        #expect(acceptedThree)
        let acceptedFourth = append([changes[3]], to: &backlog)
        #expect(!acceptedFourth)
        #expect(drained(&backlog) == Array(changes[..<3]))
        let acceptedFifth = append([changes[4]], to: &backlog)
        #expect(acceptedFifth)
    }

    @Test("ticks between changes take no place among the changes allowed to wait")
    func ticksNotCounted() {
        var backlog = WatchBacklog(limit: 2)
        let start = Self.counting(at: Self.origin)
        let lap = Self.counting(at: Self.origin + .seconds(2), laps: [.seconds(2)])
        let updates = [start, Self.counting(at: Self.origin + .seconds(1)), lap, Self.counting(at: Self.origin + .seconds(3), laps: [.seconds(2)])]
        let accepted = append(updates, to: &backlog)
        #expect(accepted)
        #expect(backlog.count == 4)
    }

    @Test("the laps waiting are bounded too, but one update always fits")
    func lapsBounded() {
        var backlog = WatchBacklog(limit: 100, lapLimit: 5)
        let laps = (1...4).map { Duration.seconds($0) }
        let first = Self.counting(at: .seconds(200), laps: laps)
        let second = Self.counting(at: .seconds(201), laps: laps + [.seconds(201)])
        let acceptedFirst = append([first], to: &backlog)
        #expect(acceptedFirst)
        let acceptedSecond = append([second], to: &backlog)
        #expect(!acceptedSecond)
        _ = backlog.removeFirst()
        let big = Self.counting(at: .seconds(202), laps: laps + laps)
        let acceptedBig = append([big], to: &backlog)
        #expect(acceptedBig)
    }
}
