import Foundation
import LinuxSystem
import StopWatchCore
@testable import StopwatchDaemon
import StopwatchProtocol
import StopWatchTesting
import Testing
import Varlink

/// Cycles across a crash in the service: phases whose ends reached the history before the
/// outbox or the state file said so are neither lost nor appended twice at the restart, and a
/// command during a long catch-up acts on the phase that runs now.
@Suite("cycles across a crash")
final class CycleCrashTests {
    let root: String
    let wall: Int64 = 1_700_000_000_000

    init() throws {
        var template = Array("/tmp/stopwatchd-cycle-crash-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    static func cycle(_ name: String, _ phases: [(String, Int64)]) -> JSONObject {
        ["name": .string(name), "phases": .array(phases.map { .object(["label": .string($0.0), "target_ms": .int($0.1)]) }), "auto": .bool(true)]
    }

    /// Run 1, until the crash: StartCycle at 100 s (a 10 s, b 10 s, c 30 s), then `run`. The
    /// state file as StartCycle saved it (the phases' changes are saved in later turns, which
    /// the crash comes before) and its interval id.
    func crashed(_ run: (StopwatchServiceFixture) -> Void) throws -> (file: StopWatchSnapshot, id: String) {
        let f = StopwatchServiceFixture(now: .seconds(100), historyDirectory: root, wallClock: ManualWallClock(wall))
        _ = f.reply("StartCycle", Self.cycle("c", [("a", 10_000), ("b", 10_000), ("c", 30_000)]))
        let file = try #require(f.saves.last?.snapshot)
        let id = try #require(f.queue.sync { f.registry.intervalID(of: "c") })
        run(f)
        return (file, id)
    }

    /// Run 2: the daemon starts again at 125 s from `first`'s file, the outbox holding `told`.
    func restarted(_ first: (file: StopWatchSnapshot, id: String), told: [ToldExpiry] = []) -> StopwatchServiceFixture {
        let f = StopwatchServiceFixture(
            now: .seconds(125), restored: [("c", first.file)], toldBeforeRestart: told, restoredIDs: ["c": first.id],
            historyDirectory: root, wallClock: ManualWallClock(wall + 25_000)
        )
        f.time.fireDueTimers()
        f.settle()
        return f
    }

    func ended(_ f: StopwatchServiceFixture) -> [Interval] {
        f.historyIntervals(["name": .string("c")]).filter { $0.endMs != nil }
    }

    func described(_ intervals: [Interval]) -> String {
        "\(intervals.map { ($0.phase ?? "-", $0.startMs - wall, $0.endMs.map { $0 - wall } ?? -1, $0.id) })"
    }

    @Test("two phase ends appended in one turn, a crash before they were told or saved: the restart tells both, appends neither again")
    func twoPhasesOneTurn() throws {
        // A suspend of 25 s across a's end (110 s) and b's (120 s): both appended in one turn.
        let first = try crashed { f in
            f.wallClock.advance(by: 25_000)
            f.time.suspend(for: .seconds(25))
            f.settle()
            #expect(ended(f).map(\.phase) == ["a", "b"])
        }
        let f = restarted(first)
        #expect(ended(f).map(\.phase) == ["a", "b"], "\(described(ended(f)))")
        #expect(f.events.map(\.event) == [.expired, .phase, .expired, .phase])
    }

    @Test("one phase end appended, a crash before it was told or saved: the restart tells it, does not append it again")
    func onePhase() throws {
        let first = try crashed { f in
            f.wallClock.advance(by: 15_000)
            f.time.suspend(for: .seconds(15))
            f.settle()
        }
        // a's end again (not appended), and b's, which fell while it was down (appended).
        let f = restarted(first)
        #expect(ended(f).map(\.phase) == ["a", "b"], "\(described(ended(f)))")
        #expect(f.events.map(\.event) == [.expired, .phase, .expired, .phase])
    }

    @Test("a told, b appended in a later turn, a crash before either was saved: the restart tells b only, appends neither again")
    func toldThenAppended() throws {
        var told: [ToldExpiry] = []
        let first = try crashed { f in
            f.wallClock.advance(by: 10_000)
            f.time.advance(by: .seconds(10))
            f.settle()
            told = f.toldExpiries
            f.wallClock.advance(by: 10_000)
            f.time.advance(by: .seconds(10))
            f.settle()
        }
        #expect(told.count == 1)
        let f = restarted(first, told: told)
        #expect(ended(f).map(\.phase) == ["a", "b"], "\(described(ended(f)))")
        #expect(f.events.map(\.event) == [.expired, .phase], "b's end and c's start; a's was told before the crash")
    }

    @Test("a command during a catch-up of more than 64 late phases: every phase told and recorded first, then the command on the phase that runs now")
    func commandDuringCatchUp() throws {
        let f = StopwatchServiceFixture(now: .seconds(100), historyDirectory: root, wallClock: ManualWallClock(wall))
        _ = f.reply("StartCycle", Self.cycle("c", [("a", 1000)]))
        f.wallClock.advance(by: 200_500)
        f.time.move(by: .milliseconds(200_500))
        let next = try #require(f.stopwatch("Next", "c"))
        f.time.fireDueTimers()
        f.settle()
        let ended = f.historyIntervals(["name": .string("c")]).filter { $0.endMs != nil }
        // The 200 that expired, then the one Next ended, half a second in.
        #expect(ended.count == 201, "\(ended.count) ended; the last: \(ended.last.map { ($0.elapsedMs, $0.startMs - wall) } ?? (0, 0)); next: \(next)")
        #expect(ended.dropLast().allSatisfy { $0.elapsedMs == 1000 } && ended.last?.elapsedMs == 500)
        #expect(next.cycle?.round == 202 && next.elapsedMs == 0)
        #expect(f.events.count { $0.event == .expired } == 200, "\(f.events.count { $0.event == .expired }) expired told")
    }

    @Test("phases appended before the machine crashed, the state file behind, restored after a reboot (another boot's clock): none appended again")
    func afterAReboot() throws {
        let first = try crashed { f in
            f.wallClock.advance(by: 25_000)
            f.time.suspend(for: .seconds(25))
            f.settle()
        }
        // The same file as the new boot reads it: its origin 25 s before now (30 s) on this
        // boot's clock, rebuilt from the wall clock.
        let other = StopwatchServiceFixture(now: .seconds(5))
        _ = other.reply("StartCycle", Self.cycle("c", [("a", 10_000), ("b", 10_000), ("c", 30_000)]))
        let rebooted = (file: try #require(other.saves.last?.snapshot), id: first.id)
        let f = StopwatchServiceFixture(
            now: .seconds(30), restored: [("c", rebooted.file)], restoredIDs: ["c": rebooted.id], historyDirectory: root,
            wallClock: ManualWallClock(wall + 25_000)
        )
        f.time.fireDueTimers()
        f.settle()
        #expect(ended(f).map(\.phase) == ["a", "b"], "\(described(ended(f)))")
    }

    @Test("a command on a cycle more phases behind than a command tells: refused (the turns catch it up), nothing recorded as a phase lasting until now")
    func commandFarBehind() throws {
        let f = StopwatchServiceFixture(now: .seconds(100), historyDirectory: root, wallClock: ManualWallClock(wall))
        _ = f.reply("StartCycle", Self.cycle("c", [("a", 1)]))
        let behind = Int64(StopwatchService.latePhasesACommand) + 100
        f.wallClock.advance(by: behind)
        f.time.move(by: .milliseconds(behind))
        #expect(f.error("Next", ["name": .string("c")]) == "io.stopwatchd.InvalidTransition")
        #expect(f.events.count { $0.event == .phase } == StopwatchService.latePhasesACommand + 1)
        // The turns tell the rest; then the command acts.
        f.time.fireDueTimers()
        f.settle { f.events.count { $0.event == .phase } == Int(behind) }
        #expect(f.events.count { $0.event == .phase } == Int(behind))
        let next = try #require(f.stopwatch("Next", "c"))
        #expect(next.elapsedMs == 0)
        #expect(ended(f).allSatisfy { $0.elapsedMs == 1 })
    }
}
