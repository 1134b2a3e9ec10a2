import StopwatchProtocol
import Testing
@testable import swctl

/// The decisions of `swctl wait`, update by update: each default, a countdown already
/// expired, a removal, reconnections (the `current` after one shows what happened while the
/// daemon was away), and what counts as a change.
@Suite("wait decisions")
struct WaitMachineTests {
    static func countdown(_ state: Stopwatch.State, elapsed: Int64, target: Int64 = 10_000, laps: [Int64] = []) -> Stopwatch {
        Stopwatch(name: "tea", state: state, elapsedMs: elapsed, lapsMs: laps, targetMs: target)
    }

    static func plain(_ state: Stopwatch.State, elapsed: Int64, laps: [Int64] = []) -> Stopwatch {
        Stopwatch(name: "tea", state: state, elapsedMs: elapsed, lapsMs: laps)
    }

    static let blank = Stopwatch(name: "tea", state: .stopped, elapsedMs: 0)

    /// Feeds `updates` in order; the outcome of the first that ends the wait, with its index,
    /// or nil when all of them leave it waiting. A `checkListed` is answered with `listed`
    /// (nil: the machine must not ask, and asking fails the test).
    static func run(_ condition: WaitCondition?, _ updates: [(WatchEvent, Stopwatch)], listed: Bool? = nil) -> (Int, WaitOutcome)? {
        var machine = WaitMachine(condition: condition)
        for (index, (event, stopwatch)) in updates.enumerated() {
            switch machine.observe(WatchUpdate(stopwatch: stopwatch, event: event)) {
            case nil: continue
            case .finish(let outcome): return (index, outcome)
            case .checkListed:
                guard let listed else {
                    Issue.record("asked whether listed at update \(index), unexpectedly")
                    return nil
                }
                if let outcome = machine.listed(listed) { return (index, outcome) }
            }
        }
        return nil
    }

    @Test("the default for a countdown is expired: ticks and other changes go by, the expiry ends it")
    func defaultForCountdown() throws {
        var machine = WaitMachine(condition: nil)
        #expect(machine.observe(WatchUpdate(stopwatch: Self.countdown(.counting, elapsed: 1_000), event: .current)) == nil)
        #expect(machine.condition == .expired)
        let result = Self.run(nil, [
            (.current, Self.countdown(.counting, elapsed: 1_000)),
            (.tick, Self.countdown(.counting, elapsed: 2_000)),
            (.lap, Self.countdown(.counting, elapsed: 2_500, laps: [2_500])),
            (.stop, Self.countdown(.pause, elapsed: 3_000, laps: [2_500])),
            (.start, Self.countdown(.counting, elapsed: 3_000, laps: [2_500])),
            (.expired, Self.countdown(.counting, elapsed: 10_000, laps: [2_500])),
        ])
        #expect(result?.0 == 5 && result?.1 == .happened)
    }

    @Test("the default for a plain stopwatch is stop, until it is done: a counting one waits through ticks, laps and a target, and its stop ends it")
    func defaultForPlain() {
        var machine = WaitMachine(condition: nil)
        #expect(machine.observe(WatchUpdate(stopwatch: Self.plain(.counting, elapsed: 1_000), event: .current)) == nil)
        #expect(machine.condition == .stop)
        #expect(machine.observe(WatchUpdate(stopwatch: Self.plain(.counting, elapsed: 2_000), event: .tick)) == nil)
        #expect(machine.observe(WatchUpdate(stopwatch: Self.plain(.counting, elapsed: 2_100, laps: [2_100]), event: .lap)) == nil)
        #expect(machine.observe(WatchUpdate(stopwatch: Self.plain(.pause, elapsed: 2_200, laps: [2_100]), event: .stop)) == .finish(.happened))
    }

    @Test("the default for a plain stopwatch not counting ends the wait at once, without asking anything",
          arguments: [WaitMachineTests.plain(.pause, elapsed: 5_000), WaitMachineTests.plain(.pause, elapsed: 5_000, laps: [2_000])])
    func defaultForPlainNotCounting(stopwatch: Stopwatch) {
        let result = Self.run(nil, [(.current, stopwatch)])
        #expect(result?.0 == 0 && result?.1 == .happened)
    }

    @Test("a wait for a stop that starts on a state never started asks List: there, it is stopped (0); not there, it never was (1)",
          arguments: [WaitCondition?.none, .stop])
    func stopOnNeverStarted(condition: WaitCondition?) {
        #expect(Self.run(condition, [(.current, Self.blank)], listed: true)?.1 == .happened)
        #expect(Self.run(condition, [(.current, Self.blank)], listed: false)?.1 == .neverCreated)
        #expect(WaitOutcome.neverCreated.exitStatus == 1)
        // Unanswered (the daemon went away): the next connection's first state asks again.
        var machine = WaitMachine(condition: condition)
        #expect(machine.observe(WatchUpdate(stopwatch: Self.blank, event: .current)) == .checkListed)
        #expect(machine.observe(WatchUpdate(stopwatch: Self.blank, event: .current)) == .checkListed)
        #expect(machine.listed(false) == .neverCreated)
        // --for change and --for expired wait for it to be made: nothing to ask.
        #expect(Self.run(.change, [(.current, Self.blank), (.start, Self.plain(.counting, elapsed: 0))])?.1 == .happened)
        #expect(Self.run(.expired, [(.current, Self.blank)]) == nil)
    }

    @Test("the default is decided once: a countdown made plain is still waited on for its expiry")
    func defaultDecidedOnce() {
        var machine = WaitMachine(condition: nil)
        _ = machine.observe(WatchUpdate(stopwatch: Self.countdown(.counting, elapsed: 0), event: .current))
        #expect(machine.observe(WatchUpdate(stopwatch: Self.plain(.counting, elapsed: 10), event: .target)) == nil)
        #expect(machine.condition == .expired)
        // A plain stopwatch made a countdown is still waited on for its stop.
        machine = WaitMachine(condition: nil)
        _ = machine.observe(WatchUpdate(stopwatch: Self.plain(.counting, elapsed: 0), event: .current))
        #expect(machine.observe(WatchUpdate(stopwatch: Self.countdown(.counting, elapsed: 10_000), event: .target)) == nil)
        #expect(machine.condition == .stop)
    }

    @Test("an expired countdown ends the wait at once: counting in overtime, at its target, or paused past it",
          arguments: [
            WaitMachineTests.countdown(.counting, elapsed: 10_000), WaitMachineTests.countdown(.counting, elapsed: 99_000),
            WaitMachineTests.countdown(.pause, elapsed: 12_000),
          ])
    func alreadyExpired(stopwatch: Stopwatch) {
        #expect(Self.run(nil, [(.current, stopwatch)])?.1 == .happened)
        #expect(Self.run(.expired, [(.current, stopwatch)])?.1 == .happened)
    }

    @Test("not expired yet: one ms short, or a countdown restarted from zero")
    func notYetExpired() {
        #expect(Self.run(.expired, [(.current, Self.countdown(.counting, elapsed: 9_999))]) == nil)
        #expect(Self.run(.expired, [(.current, Self.countdown(.counting, elapsed: 9_999)), (.start, Self.countdown(.counting, elapsed: 0))]) == nil)
        // --for expired on a plain stopwatch waits until it is a countdown that expires.
        #expect(Self.run(.expired, [(.current, Self.blank), (.start, Self.plain(.counting, elapsed: 0))]) == nil)
        #expect(Self.run(.expired, [(.current, Self.blank), (.target, Self.countdown(.counting, elapsed: 10_000))])?.1 == .happened)
    }

    @Test("removed ends every wait with 1", arguments: [WaitCondition?.none, .expired, .stop, .change])
    func removed(condition: WaitCondition?) {
        let result = Self.run(condition, [
            (.current, Self.countdown(.counting, elapsed: 1_000)),
            (.removed, Self.blank),
        ])
        #expect(result?.0 == 1 && result?.1 == .removed)
        #expect(WaitOutcome.removed.exitStatus == 1)
    }

    @Test("reconnected: an expiry that fell while the daemon was down shows in the new current, and ends the wait")
    func expiredWhileAway() {
        let result = Self.run(nil, [
            (.current, Self.countdown(.counting, elapsed: 1_000)),
            (.tick, Self.countdown(.counting, elapsed: 2_000)),
            // The daemon was killed; the next connection's first reply:
            (.current, Self.countdown(.counting, elapsed: 15_000)),
        ])
        #expect(result?.0 == 2 && result?.1 == .happened)
        // Not yet expired on reconnection: wait on.
        #expect(Self.run(nil, [
            (.current, Self.countdown(.counting, elapsed: 1_000)),
            (.current, Self.countdown(.counting, elapsed: 5_000)),
        ]) == nil)
    }

    @Test("reconnected: a stopwatch that now reads as never started, and is not in List, was removed meanwhile")
    func removedWhileAway() {
        #expect(Self.run(nil, [(.current, Self.countdown(.counting, elapsed: 1_000)), (.current, Self.blank)], listed: false)?.1 == .removed)
        // A plain one, waited on for its stop: the reset or removal while away is a stop.
        #expect(Self.run(nil, [(.current, Self.plain(.counting, elapsed: 1_000)), (.current, Self.blank)])?.1 == .happened)
        #expect(Self.run(.change, [(.current, Self.plain(.pause, elapsed: 1_000)), (.current, Self.blank)], listed: false)?.1 == .removed)
        // Never started before either: nothing happened, and nothing to ask.
        #expect(Self.run(.change, [(.current, Self.blank), (.current, Self.blank)]) == nil)
        // The first state is no reconnection, blank or not: nothing to ask either.
        #expect(Self.run(.change, [(.current, Self.blank)]) == nil)
    }

    @Test("reconnected after a plain stopwatch was reset: --for stop ends with 0 without asking; change asks List, and it is a change",
          arguments: [WaitMachineTests.plain(.pause, elapsed: 5_000), WaitMachineTests.plain(.pause, elapsed: 5_000, laps: [2_000]),
                      WaitMachineTests.plain(.counting, elapsed: 5_000)])
    func resetWhileAway(before: Stopwatch) {
        // (Counting before: stopped, then reset, while we were away.)
        #expect(Self.run(.stop, [(.current, before), (.current, Self.blank)])?.1 == .happened)
        #expect(Self.run(.stop, [(.current, before), (.current, Self.blank)], listed: false)?.1 == .happened)
        #expect(Self.run(.change, [(.current, before), (.current, Self.blank)], listed: true)?.1 == .happened)
        #expect(Self.run(nil, [(.current, before), (.current, Self.blank)])?.1 == .happened)
        // --for expired: reset, there is still no expiry; removed, there will be none.
        #expect(Self.run(.expired, [(.current, before), (.current, Self.blank)], listed: true) == nil)
        #expect(Self.run(.expired, [(.current, before), (.current, Self.blank)], listed: false)?.1 == .removed)
    }

    @Test("checkListed is asked at the blank reconnection only, and once answered the blank state is the one compared with")
    func checkListedSteps() {
        var machine = WaitMachine(condition: .expired)
        #expect(machine.listed(true) == nil)  // nothing asked
        #expect(machine.observe(WatchUpdate(stopwatch: Self.plain(.pause, elapsed: 5_000), event: .current)) == nil)
        #expect(machine.observe(WatchUpdate(stopwatch: Self.blank, event: .current)) == .checkListed)
        #expect(machine.listed(true) == nil)
        #expect(machine.listed(false) == nil)  // answered already
        // Blank again after the next reconnection: compared with the blank, nothing to ask.
        #expect(machine.observe(WatchUpdate(stopwatch: Self.blank, event: .current)) == nil)
        #expect(machine.observe(WatchUpdate(stopwatch: Self.countdown(.counting, elapsed: 10_000), event: .target)) == .finish(.happened))
    }

    @Test("checkListed unanswered (the daemon went away again): the next reconnection compares with the state before and asks again")
    func checkListedUnanswered() {
        var machine = WaitMachine(condition: .change)
        _ = machine.observe(WatchUpdate(stopwatch: Self.plain(.pause, elapsed: 5_000), event: .current))
        #expect(machine.observe(WatchUpdate(stopwatch: Self.blank, event: .current)) == .checkListed)
        #expect(machine.observe(WatchUpdate(stopwatch: Self.blank, event: .current)) == .checkListed)
        #expect(machine.listed(false) == .removed)
    }

    @Test("change after a reconnection: a command in between shows; time counted does not")
    func changeWhileAway() {
        let counting = Self.plain(.counting, elapsed: 1_000)
        let changed: [Stopwatch] = [
            Self.plain(.pause, elapsed: 1_500), Self.plain(.counting, elapsed: 2_000, laps: [1_800]),
            Self.countdown(.counting, elapsed: 2_000), Self.plain(.counting, elapsed: 200),
        ]
        for now in changed {
            #expect(Self.run(.change, [(.current, counting), (.current, now)])?.1 == .happened, "\(now)")
        }
        #expect(Self.run(.change, [(.current, counting), (.current, Self.plain(.counting, elapsed: 60_000))]) == nil)
        let paused = Self.plain(.pause, elapsed: 1_000)
        #expect(Self.run(.change, [(.current, paused), (.current, paused)]) == nil)
        #expect(Self.run(.change, [(.current, paused), (.current, Self.plain(.pause, elapsed: 3_000))])?.1 == .happened)
        // A countdown that crossed its target while away: its expiry is a change.
        let running = Self.countdown(.counting, elapsed: 1_000)
        #expect(Self.run(.change, [(.current, running), (.current, Self.countdown(.counting, elapsed: 11_000))])?.1 == .happened)
    }

    @Test("--for stop: a stop event, or a state not counting, at once or after a reconnection")
    func stop() {
        let counting = Self.plain(.counting, elapsed: 1_000)
        #expect(Self.run(.stop, [(.current, counting), (.tick, counting), (.lap, counting)]) == nil)
        #expect(Self.run(.stop, [(.current, counting), (.stop, Self.plain(.pause, elapsed: 1_200))])?.0 == 1)
        #expect(Self.run(.stop, [(.current, Self.plain(.pause, elapsed: 1_000))])?.1 == .happened)
        #expect(Self.run(.stop, [(.current, Self.blank)], listed: true)?.1 == .happened)
        #expect(Self.run(.stop, [(.current, counting), (.current, Self.plain(.pause, elapsed: 1_200))])?.1 == .happened)
        // A countdown's expiry is not a stop: it counts on in overtime.
        #expect(Self.run(.stop, [(.current, Self.countdown(.counting, elapsed: 0)), (.expired, Self.countdown(.counting, elapsed: 10_000))]) == nil)
    }

    @Test("exit statuses: 0, 1, 124")
    func exitStatuses() {
        #expect(WaitOutcome.happened.exitStatus == 0)
        #expect(WaitOutcome.removed.exitStatus == 1)
        #expect(WaitOutcome.neverCreated.exitStatus == 1)
        #expect(WaitOutcome.timedOut.exitStatus == 124)
    }
}

/// `wait` on a cycle: the default is `phase`; a phase change is an event, so it does not end
/// at once, but a cycle that has run its rounds (expired in its last phase) does.
@Suite("wait decisions: cycles")
struct CycleWaitMachineTests {
    static let phases = [Stopwatch.Phase(label: "a", targetMs: 200), Stopwatch.Phase(label: "b", targetMs: 200)]

    static func cycle(_ state: Stopwatch.State = .counting, phase: Int, round: Int, rounds: Int? = 2, elapsed: Int64) -> Stopwatch {
        Stopwatch(name: "c", state: state, elapsedMs: elapsed, targetMs: 200, cycle: .init(phases: phases, phase: phase, round: round, rounds: rounds))
    }

    @Test("the default for a cycle is phase: ticks, a stop and an expired in a manual cycle go by, the phase event ends it")
    func defaultForCycle() {
        var machine = WaitMachine(condition: nil)
        #expect(machine.observe(WatchUpdate(stopwatch: Self.cycle(phase: 0, round: 1, elapsed: 10), event: .current)) == nil)
        #expect(machine.condition == .phase)
        let result = WaitMachineTests.run(nil, [
            (.current, Self.cycle(phase: 0, round: 1, elapsed: 10)),
            (.tick, Self.cycle(phase: 0, round: 1, elapsed: 100)),
            (.stop, Self.cycle(.pause, phase: 0, round: 1, elapsed: 150)),
            (.start, Self.cycle(phase: 0, round: 1, elapsed: 150)),
            (.expired, Self.cycle(phase: 0, round: 1, elapsed: 200)),
            (.phase, Self.cycle(phase: 1, round: 1, elapsed: 0)),
        ])
        #expect(result?.0 == 5 && result?.1 == .happened)
    }

    @Test("a cycle that has run its rounds (expired in its last phase of its last round) ends the wait at once, or at that expiry")
    func finishedCycle() {
        let atOnce = WaitMachineTests.run(.phase, [(.current, Self.cycle(phase: 1, round: 2, elapsed: 250))])
        #expect(atOnce?.0 == 0 && atOnce?.1 == .happened)
        let atTheEnd = WaitMachineTests.run(nil, [
            (.current, Self.cycle(phase: 1, round: 2, elapsed: 100)),
            (.expired, Self.cycle(phase: 1, round: 2, elapsed: 200)),
        ])
        #expect(atTheEnd?.0 == 1 && atTheEnd?.1 == .happened)
        // Not the last round, or without end: an expiry in the last phase is no end.
        #expect(WaitMachineTests.run(.phase, [(.current, Self.cycle(phase: 1, round: 1, elapsed: 250))]) == nil)
        #expect(WaitMachineTests.run(.phase, [(.current, Self.cycle(phase: 1, round: 2, rounds: nil, elapsed: 250))]) == nil)
    }

    @Test("after a reconnection, another phase or round than before is a phase change; the same phase is not")
    func reconnection() {
        let moved = WaitMachineTests.run(.phase, [
            (.current, Self.cycle(phase: 0, round: 1, elapsed: 10)),
            (.current, Self.cycle(phase: 0, round: 2, elapsed: 20)),
        ])
        #expect(moved?.0 == 1 && moved?.1 == .happened)
        #expect(WaitMachineTests.run(.phase, [
            (.current, Self.cycle(phase: 0, round: 1, elapsed: 10)),
            (.current, Self.cycle(phase: 0, round: 1, elapsed: 150)),
        ]) == nil)
    }

    @Test("a cycle's removal ends the wait for a phase with removed")
    func removed() {
        let result = WaitMachineTests.run(.phase, [
            (.current, Self.cycle(phase: 0, round: 1, elapsed: 10)),
            (.removed, Stopwatch(name: "c", state: .stopped, elapsedMs: 0)),
        ])
        #expect(result?.1 == .removed)
    }
}
