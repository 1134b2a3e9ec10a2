import Foundation
import LinuxSystem
import StopWatchCore
@testable import StopwatchDaemon
import StopwatchProtocol
import StopWatchTesting
import Testing
import Varlink

/// Cycles through the service on manual time: StartCycle, the automatic phase change at each
/// phase's instant (through a suspend too), Next, Snooze and Restart, their refusals, each
/// phase an interval of the history with its label, and a restart after phases were told.
@Suite("cycles in the service")
final class CycleServiceTests {
    let root: String
    let wall: Int64 = 1_700_000_000_000

    init() throws {
        var template = Array("/tmp/stopwatchd-cycles-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    static func phases(_ phases: [(String, Int64)]) -> JSONValue {
        .array(phases.map { .object(["label": .string($0.0), "target_ms": .int($0.1)]) })
    }

    static func cycle(_ name: String, _ phases: [(String, Int64)], rounds: Int64? = nil, auto: Bool = true) -> JSONObject {
        var parameters: JSONObject = ["name": .string(name), "phases": Self.phases(phases), "auto": .bool(auto)]
        if let rounds { parameters["rounds"] = .int(rounds) }
        return parameters
    }

    func fixture(
        restored: [(name: String, snapshot: StopWatchSnapshot)] = [], told: [ToldExpiry] = [], now: Duration = .seconds(100)
    ) -> StopwatchServiceFixture {
        StopwatchServiceFixture(
            now: now, restored: restored, toldBeforeRestart: told, historyDirectory: root, wallClock: ManualWallClock(wall)
        )
    }

    /// Moves both clocks by `duration` with no timer firing (a suspend, or a busy daemon),
    /// then lets the timers that fell due fire, late.
    func away(_ f: StopwatchServiceFixture, for duration: Duration) {
        f.time.move(by: duration)
        f.wallClock.advance(by: duration.milliseconds)
        f.time.fireDueTimers()
        f.settle()
    }

    @Test("bad plans: 0 or 17 phases, a bad label, 0 ms or 367 days, 0 or 1,001 rounds, no auto: InvalidParameter, nothing created or saved")
    func badPlans() {
        let f = fixture()
        let bad: [JSONObject] = [
            Self.cycle("c", []),
            Self.cycle("c", Array(repeating: ("a", 1000), count: 17)),
            Self.cycle("c", [("", 1000)]),
            Self.cycle("c", [("a/b", 1000)]),
            Self.cycle("c", [(String(repeating: "x", count: 33), 1000)]),
            Self.cycle("c", [("a", 0)]),
            Self.cycle("c", [("a", 367 * 86_400_000)]),
            Self.cycle("c", [("a", 1000)], rounds: 0),
            Self.cycle("c", [("a", 1000)], rounds: 1001),
            ["name": .string("c"), "phases": Self.phases([("a", 1000)])],
            ["name": .string("c"), "phases": .array([.string("25m")]), "auto": .bool(true)],
        ]
        for parameters in bad {
            #expect(f.error("StartCycle", parameters) == "org.varlink.service.InvalidParameter", "\(parameters)")
        }
        #expect(f.saves.isEmpty)
        #expect(f.stopwatch("Get", "c") == Stopwatch(name: "c", state: .stopped, elapsedMs: 0))
        // The edges are allowed.
        #expect(f.reply("StartCycle", Self.cycle("c", Array(repeating: (String(repeating: "x", count: 32), 1), count: 16), rounds: 1000)) != nil)
        #expect(f.reply("StartCycle", Self.cycle("d", [("a", 366 * 86_400_000)], rounds: 1)) != nil)
    }

    @Test("Next, Snooze and Restart: on a plain stopwatch or one not expired InvalidTransition, on a missing one NoSuchStopwatch, nothing changed")
    func refusals() throws {
        let f = fixture()
        _ = f.stopwatch("Start", "plain")
        _ = f.reply("Countdown", ["name": .string("tea"), "target_ms": .int(60_000)])
        let saved = f.saves.count
        #expect(f.error("Next", ["name": .string("plain")]) == "io.stopwatchd.InvalidTransition")
        #expect(f.error("Restart", ["name": .string("plain")]) == "io.stopwatchd.InvalidTransition")
        #expect(f.error("Snooze", ["name": .string("plain"), "by_ms": .int(300_000)]) == "io.stopwatchd.InvalidTransition")
        #expect(f.error("Snooze", ["name": .string("tea"), "by_ms": .int(300_000)]) == "io.stopwatchd.InvalidTransition", "not expired")
        #expect(f.error("Next", ["name": .string("tea")]) == "io.stopwatchd.InvalidTransition", "a countdown, not a cycle")
        for method in ["Next", "Restart"] {
            #expect(f.error(method, ["name": .string("nobody")]) == "io.stopwatchd.NoSuchStopwatch")
        }
        #expect(f.error("Snooze", ["name": .string("nobody"), "by_ms": .int(300_000)]) == "io.stopwatchd.NoSuchStopwatch")
        for by in [JSONValue.int(999), .int(86_400_001), .null, .string("5m")] {
            #expect(f.error("Snooze", ["name": .string("tea"), "by_ms": by]) == "org.varlink.service.InvalidParameter")
        }
        #expect(f.saves.count == saved)
        #expect(f.stopwatch("Get", "nobody") == Stopwatch(name: "nobody", state: .stopped, elapsedMs: 0))
    }

    @Test("a suspend across three phase ends: each told in order, at its own instant, each phase an interval ending there; the right phase runs on resume")
    func suspendAcrossThreePhaseEnds() throws {
        let f = fixture()
        let (stream, updates) = try #require(f.watch("c"))
        let started = try Stopwatch(json: try #require(f.reply("StartCycle", Self.cycle("c", [("a", 10_000), ("b", 20_000), ("c", 30_000)]))?["stopwatch"]))
        #expect(started.cycle == Stopwatch.Cycle(
            phases: [.init(label: "a", targetMs: 10_000), .init(label: "b", targetMs: 20_000), .init(label: "c", targetMs: 30_000)],
            phase: 0, round: 1, rounds: nil, auto: true
        ))
        f.wallClock.advance(by: 65_000)
        f.time.suspend(for: .seconds(65))
        f.settle()
        #expect(f.events.map(\.event) == [.start, .expired, .phase, .expired, .phase, .expired, .phase])
        #expect(f.events.dropFirst().map(\.late) == [.seconds(55), .seconds(55), .seconds(35), .seconds(35), .seconds(5), .seconds(5)])
        #expect(f.events.filter { $0.event == .phase }.map { $0.update.stopwatch.cycle?.phase } == [1, 2, 0])
        #expect(f.events.last?.update.stopwatch.cycle?.round == 2)
        let now = try #require(f.stopwatch("Get", "c"))
        #expect(now.elapsedMs == 5000 && now.targetMs == 10_000 && now.cycle?.phase == 0 && now.cycle?.round == 2)
        let intervals = f.historyIntervals(["name": .string("c")])
        let ended = intervals.filter { $0.endMs != nil }
        #expect(ended.map(\.phase) == ["a", "b", "c"])
        #expect(ended.map(\.startMs) == [wall, wall + 10_000, wall + 30_000])
        #expect(ended.map(\.endMs) == [wall + 10_000, wall + 30_000, wall + 60_000])
        #expect(ended.map(\.elapsedMs) == [10_000, 20_000, 30_000])
        #expect(Set(ended.map(\.id)).count == 3)
        let open = try #require(intervals.last)
        #expect(open.endMs == nil && open.phase == "a" && open.startMs == wall + 60_000)
        // The watcher heard each of them, in order.
        let expected: [WatchEvent] = [.current, .start, .expired, .phase, .expired, .phase, .expired, .phase]
        f.settle { updates.withLock { $0.map(\.event).filter { $0 != .tick } } == expected }
        #expect(updates.withLock { $0.map(\.event).filter { $0 != .tick } } == expected)
        f.queue.sync { stream.cancel() }
    }

    @Test("rounds: after the last phase of the last round it stays expired in it, and nothing more is scheduled")
    func lastRound() throws {
        let f = fixture()
        _ = f.reply("StartCycle", Self.cycle("c", [("a", 1000), ("b", 2000)], rounds: 2))
        f.time.advance(by: .seconds(10))
        f.settle()
        #expect(f.events.map(\.event) == [.start, .expired, .phase, .expired, .phase, .expired, .phase, .expired])
        let last = try #require(f.stopwatch("Get", "c"))
        #expect(last.state == .counting && last.elapsedMs == 6000 && last.cycle?.phase == 1 && last.cycle?.round == 2)
        #expect(f.queue.sync { f.stopwatches.expiries.count } == 0)
        #expect(f.error("Next", ["name": .string("c")]) == "io.stopwatchd.InvalidTransition", "nothing follows the last phase")
    }

    @Test("a manual cycle runs on in overtime until Next, which ends the phase now and starts the next")
    func manualCycle() throws {
        let f = fixture()
        _ = f.reply("StartCycle", Self.cycle("m", [("work", 10_000), ("rest", 5000)], auto: false))
        away(f, for: .seconds(25))
        #expect(f.events.map(\.event) == [.start, .expired])
        let overtime = try #require(f.stopwatch("Get", "m"))
        #expect(overtime.elapsedMs == 25_000 && overtime.cycle?.phase == 0)
        let next = try #require(f.stopwatch("Next", "m"))
        #expect(next.elapsedMs == 0 && next.targetMs == 5000 && next.cycle?.phase == 1 && next.state == .counting)
        #expect(f.events.map(\.event).last == .phase)
        let ended = f.historyIntervals(["name": .string("m")]).filter { $0.endMs != nil }
        #expect(ended.map(\.phase) == ["work"] && ended.map(\.elapsedMs) == [25_000])
    }

    @Test("Snooze an expired countdown twice: the target grows to elapsed + by each time, a snooze event, it expires again once; Restart runs the original again")
    func snoozeTwice() throws {
        let f = fixture()
        _ = f.reply("Countdown", ["name": .string("tea"), "target_ms": .int(60_000)])
        f.time.advance(by: .seconds(61))
        let once = try Stopwatch(json: try #require(f.reply("Snooze", ["name": .string("tea"), "by_ms": .int(300_000)])?["stopwatch"]))
        #expect(once.targetMs == 361_000 && once.elapsedMs == 61_000)
        #expect(f.error("Snooze", ["name": .string("tea"), "by_ms": .int(300_000)]) == "io.stopwatchd.InvalidTransition", "not expired again yet")
        f.time.advance(by: .seconds(301))
        let twice = try Stopwatch(json: try #require(f.reply("Snooze", ["name": .string("tea"), "by_ms": .int(60_000)])?["stopwatch"]))
        #expect(twice.targetMs == 422_000)
        f.time.advance(by: .seconds(61))
        f.settle()
        #expect(f.events.map(\.event) == [.start, .expired, .snooze, .expired, .snooze, .expired])
        let restarted = try #require(f.stopwatch("Restart", "tea"))
        #expect(restarted.targetMs == 60_000 && restarted.elapsedMs == 0 && restarted.state == .counting)
        #expect(f.events.last?.event == .start)
    }

    @Test("Restart mid-cycle: its first phase of round 1, from zero, now; the phase it was in ends as an interval")
    func restartMidCycle() throws {
        let f = fixture()
        _ = f.reply("StartCycle", Self.cycle("c", [("a", 10_000), ("b", 20_000)], rounds: 3))
        away(f, for: .seconds(15))
        let restarted = try #require(f.stopwatch("Restart", "c"))
        #expect(restarted.elapsedMs == 0 && restarted.cycle?.phase == 0 && restarted.cycle?.round == 1 && restarted.targetMs == 10_000)
        #expect(f.events.map(\.event) == [.start, .expired, .phase, .start])
        let ended = f.historyIntervals(["name": .string("c")]).filter { $0.endMs != nil }
        #expect(ended.map(\.phase) == ["a", "b"] && ended.map(\.elapsedMs) == [10_000, 5000])
    }

    @Test("a restart after phases were told and before their file said so: they are not told again, nor appended twice; those since are told late")
    func restartAfterToldPhases() throws {
        // Phase a (10 s) began at 100 s and expired at 110 s; told (the outbox says so), and b
        // began there; the state file still runs a. The daemon comes back at 135 s: b expired
        // at 130 s while it was down.
        let cycle = try #require(StopWatchCycle(
            phases: [.init(label: "a", target: .seconds(10)), .init(label: "b", target: .seconds(20))], rounds: nil, auto: true
        ))
        let file = StopWatchSnapshot.counting(since: .seconds(100), now: .seconds(100), target: .seconds(10)).restoring(cycle: cycle, snooze: nil)
        let f = fixture(restored: [("c", file)], told: [ToldExpiry(name: "c", instant: .seconds(110))], now: .seconds(135))
        f.time.fireDueTimers()
        f.settle()
        #expect(f.events.map(\.event) == [.expired, .phase], "b's end and c's start, not a's again")
        #expect(f.events.first?.late == .seconds(5))
        let now = try #require(f.stopwatch("Get", "c"))
        #expect(now.cycle?.phase == 0 && now.cycle?.round == 2 && now.elapsedMs == 5000)
    }

    @Test("2,000 automatic cycles whose phases end at one instant: each told expired then phase, in order, to every watcher, in batches of the scheduler's size, on one boot timer")
    func manyCyclesAtOneInstant() throws {
        let count = 2000
        let f = StopwatchServiceFixture(maximumStopwatches: count, now: .seconds(100))
        for index in 0..<count {
            _ = f.reply("StartCycle", Self.cycle("c\(index)", [("a", 1000), ("b", 1000)], rounds: 1))
        }
        var watched: [(stream: any VarlinkReplyStream, updates: Locked<[WatchUpdate]>)] = []
        for index in stride(from: 0, to: count, by: 100) { watched.append(try #require(f.watch("c\(index)"))) }
        f.settle()
        f.time.advance(by: .seconds(3))
        let expected: [WatchEvent] = [.current, .expired, .phase, .expired]
        #expect(f.settle(turns: 10_000) { f.events.count { $0.event == .expired } == 2 * count })
        #expect(f.events.count { $0.event == .phase } == count)
        for (_, updates) in watched {
            f.settle { updates.withLock { $0.map(\.event).filter { $0 != .tick } } == expected }
            #expect(updates.withLock { $0.map(\.event).filter { $0 != .tick } } == expected)
        }
        // Per stopwatch, in order; per batch, at most the scheduler's 256 expiries and the
        // late phases a turn may add.
        for name in ["c0", "c1999"] {
            #expect(f.events.filter { $0.name == name }.map(\.event) == [.start, .expired, .phase, .expired])
        }
        #expect(f.batches.allSatisfy { $0.expiries.count <= 256 + StopwatchService.latePhasesATurn }, "\(f.batches.map(\.expiries.count))")
        #expect(f.time.timers.filter { $0.clock == .boot }.count == 1)
        #expect(f.queue.sync { f.stopwatches.expiries.count } == 0)
        f.queue.sync { for (stream, _) in watched { stream.cancel() } }
    }

    @Test("200 phase ends in one suspend: all told, in order, over several turns of the queue (64 late phases a turn), and the right one runs")
    func manyPhaseEndsInOneSuspend() throws {
        let f = fixture()
        _ = f.reply("StartCycle", Self.cycle("c", [("a", 1000)]))
        f.wallClock.advance(by: 200_500)
        f.time.suspend(for: .milliseconds(200_500))
        f.settle { f.events.count == 401 }
        #expect(f.events.count { $0.event == .expired } == 200 && f.events.count { $0.event == .phase } == 200)
        #expect(f.events.dropFirst().map(\.event) == Array(repeating: [WatchEvent.expired, .phase], count: 200).flatMap { $0 })
        #expect(f.events.filter { $0.event == .phase }.map { $0.update.stopwatch.cycle?.round } == (2...201).map { Optional($0) })
        #expect(f.batches.count { !$0.expiries.isEmpty } > 1, "not all in one turn")
        let now = try #require(f.stopwatch("Get", "c"))
        #expect(now.cycle?.round == 201 && now.elapsedMs == 500)
        let ended = f.historyIntervals(["name": .string("c")]).filter { $0.endMs != nil }
        #expect(ended.count == 200 && ended.last?.endMs == wall + 200_000)
    }

    @Test("SetTarget ends a cycle, even with the current phase's own target")
    func setTargetEndsCycle() throws {
        let f = fixture()
        _ = f.reply("StartCycle", Self.cycle("c", [("focus", 1_500_000), ("break", 300_000)]))
        let same = try Stopwatch(json: try #require(f.reply("SetTarget", ["name": .string("c"), "target_ms": .int(1_500_000)])?["stopwatch"]))
        #expect(same.cycle == nil && same.targetMs == 1_500_000)
        #expect(f.events.map(\.event) == [.start, .target])
    }
}
