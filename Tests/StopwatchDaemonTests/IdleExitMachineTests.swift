import Testing
@testable import StopwatchDaemon

/// The exit-on-idle decisions, with the clock given as values: no timer, no sleep.
@Suite("exit on idle: the state machine")
struct IdleExitMachineTests {
    let period = Duration.seconds(300)

    @Test("idle from the first check that finds nothing to do; exits when the timer finds it still idle")
    func idleThenExit() {
        var machine = IdleExitMachine(period: period)
        #expect(machine.activityChanged(isBusy: false, now: .seconds(10)) == .arm(at: .seconds(310)))
        // More reports while idle: the idle period keeps its start.
        #expect(machine.activityChanged(isBusy: false, now: .seconds(200)) == .none)
        #expect(!machine.isExiting)
        #expect(machine.timerFired(isBusy: false, now: .seconds(310)) == .exit(idleSince: .seconds(10)))
        #expect(machine.isExiting)
        // Exiting: nothing changes it any more.
        #expect(machine.activityChanged(isBusy: true, now: .seconds(311)) == .none)
        #expect(machine.timerFired(isBusy: false, now: .seconds(900)) == .none)
    }

    @Test("busy again before the period ends: disarmed, and the next idle spell starts from its own beginning")
    func busyAgain() {
        var machine = IdleExitMachine(period: period)
        #expect(machine.activityChanged(isBusy: true, now: .seconds(1)) == .none)
        #expect(machine.activityChanged(isBusy: false, now: .seconds(5)) == .arm(at: .seconds(305)))
        #expect(machine.activityChanged(isBusy: true, now: .seconds(300)) == .disarm)
        #expect(machine.activityChanged(isBusy: true, now: .seconds(301)) == .none)
        // A timer that fires anyway (it was on its way) finds the machine busy: no exit.
        #expect(machine.timerFired(isBusy: true, now: .seconds(305)) == .none)
        #expect(machine.activityChanged(isBusy: false, now: .seconds(400)) == .arm(at: .seconds(700)))
        #expect(machine.timerFired(isBusy: false, now: .seconds(700)) == .exit(idleSince: .seconds(400)))
    }

    @Test("the timer finds the daemon busy without a report: it stays up, and the end of that busy spell arms again")
    func busyAtTheTimer() {
        var machine = IdleExitMachine(period: period)
        _ = machine.activityChanged(isBusy: false, now: .zero)
        #expect(machine.timerFired(isBusy: true, now: .seconds(300)) == .none)
        #expect(!machine.isExiting)
        #expect(machine.activityChanged(isBusy: false, now: .seconds(320)) == .arm(at: .seconds(620)))
    }

    @Test("a timer early by the machine's clock waits the rest")
    func early() {
        var machine = IdleExitMachine(period: period)
        _ = machine.activityChanged(isBusy: false, now: .seconds(100))
        #expect(machine.timerFired(isBusy: false, now: .seconds(399)) == .arm(at: .seconds(400)))
        #expect(!machine.isExiting)
        #expect(machine.timerFired(isBusy: false, now: .seconds(400) + .milliseconds(3)) == .exit(idleSince: .seconds(100)))
    }

    @Test("busy from the start until told otherwise: a timer never armed finds nothing to do")
    func startsBusy() {
        var machine = IdleExitMachine(period: period)
        #expect(machine.timerFired(isBusy: false, now: .seconds(1000)) == .none)
        #expect(!machine.isExiting)
    }
}
