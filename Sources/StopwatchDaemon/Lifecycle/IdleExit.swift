import Dispatch
import StopWatchCore

/// Ends a socket-activated daemon that has had nothing to do for `--exit-idle`: no client
/// connected, no hook running or waiting, no countdown still to expire, nothing unsaved
/// (the daemon's `isBusy`). A counting stopwatch does not keep it: its time is on disk,
/// and systemd starts the daemon again at the next connection.
///
/// The parts that make the daemon busy report changes (`activityMayHaveChanged`); one check
/// per burst runs in a later turn of the queue, after the whole turn that reported (a
/// command's change is followed by its hooks being queued, in the same turn). What to do
/// is `IdleExitMachine`'s; this type owns the timer and performs the actions.
///
/// `@unchecked Sendable` is safe here: every stored property is read and written only on
/// `queue` (serial): `start`, `activityMayHaveChanged`, the checks it queues and the
/// timer's handler all run there (`activityMayHaveChangedElsewhere` only queues).
final class IdleExit: @unchecked Sendable {
    private let queue: DispatchQueue
    private let clock: any StopWatchClock
    private let timers: any TickTimerFactory
    private var machine: IdleExitMachine
    /// Made when the machine arms it, dropped when it disarms it.
    private var timer: (any TickTimer)?
    /// Nil until `start`: no check before the daemon serves.
    private var isBusy: (() -> Bool)?
    private var exit: (_ idleFor: Duration) -> Void = { _ in }
    private var isCheckQueued = false

    /// How long the daemon must stay idle before it exits.
    var period: Duration { machine.period }

    init(period: Duration, queue: DispatchQueue, clock: any StopWatchClock, timers: any TickTimerFactory) {
        self.machine = IdleExitMachine(period: period)
        self.queue = queue
        self.clock = clock
        self.timers = timers
    }

    /// On the queue, once the daemon serves: checks from now on, the first at once (a daemon
    /// started for a client that went away is idle from then).
    ///
    /// - Parameters:
    ///   - isBusy: whether anything keeps the daemon now; called on the queue.
    ///   - exit: ends the process; called on the queue with how long it was idle.
    func start(isBusy: @escaping () -> Bool, exit: @escaping (_ idleFor: Duration) -> Void) {
        self.isBusy = isBusy
        self.exit = exit
        activityMayHaveChanged()
    }

    /// On the queue: something that keeps the daemon busy may have begun or ended. Checked
    /// in a later turn, once however many reports come before it.
    func activityMayHaveChanged() {
        guard isBusy != nil, !isCheckQueued else { return }
        isCheckQueued = true
        queue.async { [weak self] in self?.check() }
    }

    /// From any thread (the hook runner's queue): as `activityMayHaveChanged`.
    func activityMayHaveChangedElsewhere() {
        queue.async { [weak self] in self?.activityMayHaveChanged() }
    }

    private func check() {
        isCheckQueued = false
        guard let isBusy else { return }
        perform(machine.activityChanged(isBusy: isBusy(), now: clock.now()))
    }

    private func timerFired() {
        guard let isBusy else { return }
        perform(machine.timerFired(isBusy: isBusy(), now: clock.now()))
    }

    private func perform(_ action: IdleExitMachine.Action) {
        switch action {
        case .arm(let deadline):
            let timer = self.timer ?? timers.makeTimer(on: queue) { [weak self] _, _ in self?.timerFired() }
            self.timer = timer
            timer.schedule(at: deadline, now: clock.now())
        case .disarm:
            timer?.cancel()
            timer = nil
        case .exit(let since):
            timer?.cancel()
            timer = nil
            exit(clock.now() - since)
        case .none:
            break
        }
    }
}
