import Dispatch
import StopWatchCore
import StopwatchProtocol

/// When each counting countdown expires, on one timer armed for the nearest: the cost
/// follows expiries, not countdowns (10,000 counting countdowns are one armed timer).
///
/// The service tells it every stopwatch's new snapshot (`update`); it keeps each one's
/// expiry instant (`StopWatchSnapshot.expiry`, on the boot clock) and calls `due` with the
/// names and instants that have come, a batch at a time. In production the timer is a `timerfd`
/// on `CLOCK_BOOTTIME` (`BootTimerFactory`): a countdown ends on time through a suspend.
///
/// Due expiries are handed over `batch` at a time; more due at once (10,000 countdowns set
/// for one instant) continue in a later turn of the queue, so clients are served between.
/// (A command that reaches a countdown whose instant has passed meanwhile expires it
/// first: the service sees to that.)
// Sendable without checks, so the timer's handler can hold it weakly: every stored property
// is read and written only on `queue` (serial), where that handler, the service that calls
// `update`, and `due` all run.
final class ExpiryScheduler: @unchecked Sendable {
    private let clock: any StopWatchClock
    private let queue: DispatchQueue
    private let batch: Int
    private let due: (_ expiries: [(name: String, instant: Duration)]) -> Void
    private var deadlines = Deadlines()
    /// The pending expiry of each countdown that has one, and its token in `deadlines`; by
    /// exact name.
    private var pending: [StopwatchKey: (instant: Duration, token: UInt64)] = [:]
    private var nextToken: UInt64 = 0
    /// Made once the first countdown needs it, then kept: one timer for the daemon's life.
    private var timer: (any TickTimer)?
    private let timers: any TickTimerFactory
    /// Where the timer is armed, if it is.
    private var armedAt: Duration?
    private var isFiring = false
    /// The batch being taken from `deadlines` in `fire`.
    private var dueNow: [(name: String, instant: Duration)] = []

    init(
        timers: any TickTimerFactory,
        clock: any StopWatchClock,
        queue: DispatchQueue,
        batch: Int = 256,
        due: @escaping (_ expiries: [(name: String, instant: Duration)]) -> Void
    ) {
        self.timers = timers
        self.clock = clock
        self.queue = queue
        self.batch = max(batch, 1)
        self.due = due
    }

    /// How many countdowns wait for their expiry.
    var count: Int { pending.count }

    /// The expiry instant of `name`, if it waits for one.
    func instant(of name: String) -> Duration? { pending[StopwatchKey(name)]?.instant }

    /// `name` is now `snapshot` (nil: removed): its expiry is scheduled, moved or dropped.
    func update(_ name: String, _ snapshot: StopWatchSnapshot?) {
        let key = StopwatchKey(name)
        let instant = snapshot?.expiry
        guard pending[key]?.instant != instant else { return }
        if let old = pending.removeValue(forKey: key) { deadlines.remove(old.token) }
        if let instant {
            let token = nextToken
            nextToken += 1
            pending[key] = (instant, token)
            deadlines.insert(token, at: instant) { [unowned self] in
                self.pending[key] = nil
                self.dueNow.append((name, instant))
            }
        }
        if !isFiring { arm() }
    }

    private func arm() {
        guard let nearest = deadlines.nearest else { return }
        // Armed earlier than needed is fine: it fires, finds nothing due, and re-arms.
        if let armedAt, armedAt <= nearest, armedAt > clock.now() { return }
        let timer = self.timer ?? makeTimer()
        timer.schedule(at: nearest, now: clock.now())
        armedAt = nearest
    }

    private func makeTimer() -> any TickTimer {
        let timer = timers.makeTimer(on: queue) { [weak self] _, _ in self?.fire() }
        self.timer = timer
        return timer
    }

    private func fire() {
        armedAt = nil
        isFiring = true
        let now = clock.now()
        while dueNow.count < batch, let take = deadlines.removeDue(at: now) {
            take()
        }
        let expiries = dueNow
        dueNow = []
        if !expiries.isEmpty { due(expiries) }
        isFiring = false
        if expiries.count == batch, let nearest = deadlines.nearest, nearest <= now {
            queue.async { [weak self] in self?.fire() }
        } else {
            arm()
        }
    }
}
