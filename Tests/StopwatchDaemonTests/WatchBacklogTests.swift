import StopWatchCore
@testable import StopwatchDaemon
import StopwatchProtocol
import Testing

/// What waits for a watcher that reads slowly: ticks merge, changes never do (SPEC §3).
@Suite("watch backlog")
struct WatchBacklogTests {
    static let origin = Duration.seconds(100)

    static func counting(at now: Duration, laps: [Duration] = []) -> StopWatchSnapshot {
        .counting(since: origin, laps: laps, now: now)
    }

    /// Appends each in turn, with the event the fan-out would tell from the one before;
    /// whether the backlog took them all.
    func append(_ snapshots: [StopWatchSnapshot], to backlog: inout WatchBacklog) -> Bool {
        var previous: StopWatchSnapshot?
        return snapshots.allSatisfy { snapshot in
            defer { previous = snapshot }
            return backlog.append(snapshot, previous.map { WatchEvent(from: $0, to: snapshot) } ?? .current)
        }
    }

    func drained(_ backlog: inout WatchBacklog) -> [StopWatchSnapshot] {
        var taken: [StopWatchSnapshot] = []
        while let next = backlog.removeFirst() { taken.append(next.snapshot) }
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
        #expect(accepted && backlog.removeFirst()?.snapshot == start)
        let ticks = [Self.counting(at: Self.origin + .seconds(1)), Self.counting(at: Self.origin + .seconds(2))]
        let acceptedTicks = ticks.allSatisfy { backlog.append($0, .tick) }
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
        let acceptedFirst = backlog.append(first, .lap)
        #expect(acceptedFirst)
        let acceptedSecond = backlog.append(second, .lap)
        #expect(!acceptedSecond)
        _ = backlog.removeFirst()
        let big = Self.counting(at: .seconds(202), laps: laps + laps)
        let acceptedBig = backlog.append(big, .lap)
        #expect(acceptedBig)
    }
}

/// Which event each change is: what watchers and hooks are told (SPEC §3).
@Suite("watch events")
struct WatchEventTests {
    static let now = Duration.seconds(100)

    static func after(_ commands: [StopWatchCommand], from start: StopWatchSnapshot = .stopped) throws -> [WatchEvent] {
        var snapshot = start
        var events: [WatchEvent] = []
        for (index, command) in commands.enumerated() {
            let next = try snapshot.applying(command, at: now + .seconds(index + 1))
            events.append(WatchEvent(from: snapshot, to: next))
            snapshot = next
        }
        return events
    }

    @Test("commands: start, stop, toggle both ways, lap, reset, SetTarget and Countdown")
    func commands() throws {
        #expect(try Self.after([.start, .lap, .stop, .toggle, .toggle, .reset]) == [.start, .lap, .stop, .start, .stop, .reset])
        #expect(try Self.after([.setTarget(.seconds(60)), .start, .setTarget(.seconds(90)), .setTarget(nil)]) == [.target, .start, .target, .target])
        #expect(try Self.after([.countdown(.seconds(60)), .lap, .countdown(.seconds(30)), .stop, .countdown(.seconds(5))]) == [.start, .lap, .start, .stop, .start])
    }

    @Test("an expiry, and a reset after one")
    func expiry() throws {
        let counting = StopWatchSnapshot.counting(since: .seconds(0), now: Self.now, target: .seconds(5))
        let expired = try counting.applying(.expire, at: Self.now)
        #expect(WatchEvent(from: counting, to: expired) == .expired)
        let paused = try expired.applying(.stop, at: Self.now)
        #expect(WatchEvent(from: expired, to: paused) == .stop)
        #expect(WatchEvent(from: paused, to: try paused.applying(.reset, at: Self.now)) == .reset)
        // A target set below the elapsed time: the target first, then the expiry it makes due.
        let plain = StopWatchSnapshot.counting(since: .seconds(0), now: Self.now)
        let retargeted = try plain.applying(.setTarget(.seconds(1)), at: Self.now)
        #expect(WatchEvent(from: plain, to: retargeted) == .target)
        #expect(WatchEvent(from: retargeted, to: try retargeted.applying(.expire, at: Self.now)) == .expired)
    }

    @Test("only time moved: a tick, expired or not")
    func ticks() {
        let counting = StopWatchSnapshot.counting(since: .seconds(0), laps: [.seconds(1)], now: Self.now, target: .seconds(5), hasExpired: true)
        #expect(WatchEvent(from: counting, to: counting.ticked(at: Self.now + .seconds(1))) == .tick)
    }
}
