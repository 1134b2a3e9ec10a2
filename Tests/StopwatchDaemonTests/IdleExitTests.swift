import Dispatch
import LinuxSystem
import StopWatchTesting
import Testing
@testable import StopwatchDaemon

/// `IdleExit` on manual time: reports coalesced into one check on the queue, the timer armed,
/// disarmed and fired as the machine says, the exit called once.
@Suite("exit on idle: the driver")
struct IdleExitTests {
    let time = ManualTime(now: .seconds(1000))
    let queue = DispatchQueue(label: "idle-exit-test")
    let busy = Locked(false)
    let exits = Locked<[Duration]>([])
    let checks = Locked(0)

    func started(period: Duration = .seconds(5)) -> IdleExit {
        let idleExit = IdleExit(period: period, queue: queue, clock: time, timers: time)
        let busy = self.busy, exits = self.exits, checks = self.checks
        queue.sync {
            idleExit.start(
                isBusy: {
                    checks.withLock { $0 += 1 }
                    return busy.withLock { $0 }
                },
                exit: { idleFor in exits.withLock { $0.append(idleFor) } }
            )
        }
        settle()
        return idleExit
    }

    /// Runs what the queue has queued (the checks `activityMayHaveChanged` asks for).
    func settle() {
        queue.sync {}
        queue.sync {}
    }

    func report(_ idleExit: IdleExit, busy: Bool) {
        self.busy.withLock { $0 = busy }
        queue.sync { idleExit.activityMayHaveChanged() }
        settle()
    }

    @Test("idle from the start: exits once the period has passed, not before")
    func exitsAfterThePeriod() {
        let idleExit = started()
        #expect(time.liveTimers.map(\.deadline) == [.seconds(1005)])
        time.advance(by: .milliseconds(4999))
        #expect(exits.withLock { $0 }.isEmpty)
        time.advance(by: .milliseconds(1))
        #expect(exits.withLock { $0 } == [.seconds(5)])
        // Exiting: later reports arm nothing.
        report(idleExit, busy: false)
        #expect(time.liveTimers.isEmpty)
        #expect(exits.withLock { $0 }.count == 1)
    }

    @Test("busy before the period ends: the timer is disarmed; idle again, the period starts over")
    func busyAgain() {
        let idleExit = started()
        time.advance(by: .seconds(4))
        report(idleExit, busy: true)
        #expect(time.liveTimers.isEmpty)
        time.advance(by: .seconds(60))
        #expect(exits.withLock { $0 }.isEmpty)
        report(idleExit, busy: false)
        #expect(time.liveTimers.compactMap(\.deadline) == [.seconds(1069)])
        time.advance(by: .seconds(5))
        #expect(exits.withLock { $0 } == [.seconds(5)])
    }

    @Test("the timer re-checks: busy then (not reported yet) keeps the daemon up")
    func recheckAtTheTimer() {
        _ = started()
        busy.withLock { $0 = true }
        time.advance(by: .seconds(10))
        #expect(exits.withLock { $0 }.isEmpty)
        #expect(time.liveTimers.compactMap(\.deadline).isEmpty)
    }

    @Test("a burst of reports is one check")
    func coalesced() {
        let idleExit = started()
        let before = checks.withLock { $0 }
        queue.sync {
            for _ in 0..<100 { idleExit.activityMayHaveChanged() }
        }
        idleExit.activityMayHaveChangedElsewhere()
        settle()
        // The burst on the queue is one check; the report from elsewhere, queued after it, one more.
        let made = checks.withLock { $0 } - before
        #expect(made >= 1 && made <= 2, "\(made) checks")
    }

    @Test("before start, reports check nothing")
    func notStarted() {
        let idleExit = IdleExit(period: .seconds(1), queue: queue, clock: time, timers: time)
        queue.sync { idleExit.activityMayHaveChanged() }
        settle()
        #expect(time.timersMade == 0)
        #expect(checks.withLock { $0 } == 0)
    }
}
