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

    /// Two phases of a second each, `rounds` rounds.
    static func shortCycle(rounds: Int? = 2, auto: Bool = true) -> StopWatchCycle {
        StopWatchCycle(phases: [.init(label: "a", target: .seconds(1)), .init(label: "b", target: .seconds(1))], rounds: rounds, auto: auto)!
    }

    @Test("a cycle: StartCycle and Restart are start, each phase change (the automatic one or Next) phase, a reset reset")
    func cycleCommands() throws {
        // One command a second from 101: the first phase expires at 102, the automatic change
        // at 103 counts the next from 102.
        #expect(try Self.after([.startCycle(Self.shortCycle()), .expire, .advance, .next, .stop, .restart, .next, .stop, .reset]) == [
            .start, .expired, .phase, .phase, .stop, .start, .phase, .stop, .reset,
        ])
        // Next from paused or stopped starts the next phase: phase, not start.
        #expect(try Self.after([.startCycle(Self.shortCycle(auto: false)), .stop, .next, .stop, .reset, .next]) == [
            .start, .stop, .phase, .stop, .reset, .phase,
        ])
        // A manual cycle expires and waits: advance changes nothing (no event at all).
        let manual = try StopWatchSnapshot.stopped.applying(.startCycle(Self.shortCycle(auto: false)), at: Self.now)
        let expired = try manual.applying(.expire, at: Self.now + .seconds(1))
        #expect(WatchEvent(from: manual, to: expired) == .expired)
        #expect(try expired.applying(.advance, at: Self.now + .seconds(2)) == expired)
        // Restart in the first phase of round 1 is a start anew, as from another phase.
        #expect(try Self.after([.startCycle(Self.shortCycle()), .restart]) == [.start, .start])
        // A new cycle over a running one: start.
        #expect(try Self.after([.startCycle(Self.shortCycle()), .next, .startCycle(Self.shortCycle(rounds: nil))]) == [.start, .phase, .start])
    }

    @Test("a whole pomodoro driven by its expiries: start, then expired and phase for each of 31 phase changes, the last expired only")
    func pomodoroEvents() throws {
        let cycle = try #require(StopWatchCycle(
            phases: CyclePlan.pomodoro.map { StopWatchCycle.Phase(label: $0.label, target: $0.target) }, rounds: 4, auto: true
        ))
        var snapshot = try StopWatchSnapshot.stopped.applying(.startCycle(cycle), at: Self.now)
        var events: [WatchEvent] = [.start]
        var labels = [snapshot.cycle?.current.label]
        while let expiry = snapshot.expiry {
            let expired = try snapshot.applying(.expire, at: expiry)
            events.append(WatchEvent(from: snapshot, to: expired))
            let advanced = try expired.applying(.advance, at: expiry)
            if advanced != expired {
                events.append(WatchEvent(from: expired, to: advanced))
                labels.append(advanced.cycle?.current.label)
            }
            snapshot = advanced
        }
        #expect(events == [.start] + Array(repeating: [WatchEvent.expired, .phase], count: 31).flatMap { $0 } + [.expired])
        #expect(labels.count == 32)
        #expect(labels.prefix(8).map { $0 ?? "" } == CyclePlan.pomodoro.map { $0.label })
        #expect(snapshot.cycle?.isLast == true && snapshot.hasExpired)
    }

    @Test("a snooze is snooze, its expiry expired; Restart after it start")
    func snooze() throws {
        #expect(try Self.after([.countdown(.seconds(1)), .expire, .snooze(by: .seconds(1)), .expire, .snooze(by: .seconds(60)), .restart]) == [
            .start, .expired, .snooze, .expired, .snooze, .start,
        ])
        // The last phase of a cycle, snoozed; then Reset.
        #expect(try Self.after([.startCycle(Self.shortCycle(rounds: 1)), .next, .expire, .snooze(by: .seconds(5)), .stop, .reset]) == [
            .start, .phase, .expired, .snooze, .stop, .reset,
        ])
    }

    @Test("only time moved: a tick, expired or not")
    func ticks() {
        let counting = StopWatchSnapshot.counting(since: .seconds(0), laps: [.seconds(1)], now: Self.now, target: .seconds(5), hasExpired: true)
        #expect(WatchEvent(from: counting, to: counting.ticked(at: Self.now + .seconds(1))) == .tick)
    }
}
