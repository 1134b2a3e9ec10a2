import Dispatch
import StopWatchCore
import StopwatchProtocol

/// When each counting countdown expires, on one timer per clock armed for the nearest: the
/// cost follows expiries, not countdowns (10,000 counting countdowns are at most two armed
/// timers).
///
/// The service tells it every stopwatch's new snapshot (`update`); it keeps each one's
/// expiry instant (`StopWatchSnapshot.expiry`, on the stopwatch's own clock) and calls `due`
/// with the names and instants that have come, a batch at a time. A countdown that counts
/// sleep waits on the boot clock, one that skips it on the awake clock: in production a
/// `timerfd` on `CLOCK_BOOTTIME` (a countdown ends on time through a suspend) and one on
/// `CLOCK_MONOTONIC` (a suspend postpones it by its length: only awake time counts), each
/// waited on in the serving loop's `epoll` (`LoopTimerFactory`).
///
/// Due expiries are handed over `batch` at a time; more due at once (10,000 countdowns set
/// for one instant) continue in a later turn of the queue, so clients are served between.
/// (A command that reaches a countdown whose instant has passed meanwhile expires it
/// first: the service sees to that.)
// Sendable without checks, so the timers' handlers can hold it weakly: every stored property
// (and each timeline's) is read and written only on `queue` (serial), where those handlers,
// the service that calls `update`, and `due` all run.
final class ExpiryScheduler: @unchecked Sendable {
    private let boot: ExpiryTimeline
    private let awake: ExpiryTimeline

    /// - Parameters:
    ///   - timers: makes the boot clock's timer (deadlines on `clock.now()`).
    ///   - awakeTimers: makes the awake clock's timer (deadlines on `clock.awakeNow()`).
    init(
        timers: any TickTimerFactory,
        awakeTimers: any TickTimerFactory,
        clock: any StopWatchClock,
        queue: DispatchQueue,
        batch: Int = 256,
        due: @escaping (_ expiries: [(name: String, instant: Duration)]) -> Void
    ) {
        boot = ExpiryTimeline(timers: timers, read: { clock.now() }, queue: queue, batch: batch, due: due)
        awake = ExpiryTimeline(timers: awakeTimers, read: { clock.awakeNow() }, queue: queue, batch: batch, due: due)
    }

    /// How many countdowns wait for their expiry.
    var count: Int { boot.count + awake.count }

    /// The expiry instant of `name` on its own clock, if it waits for one.
    func instant(of name: String) -> Duration? { boot.instant(of: name) ?? awake.instant(of: name) }

    /// `name` is now `snapshot` (nil: removed): its expiry is scheduled, moved or dropped
    /// (and moved to the other clock's timeline when it switched clocks).
    func update(_ name: String, _ snapshot: StopWatchSnapshot?) {
        boot.update(name, snapshot?.countsSleep == true ? snapshot?.expiry : nil)
        awake.update(name, snapshot?.countsSleep == false ? snapshot?.expiry : nil)
    }
}

/// The expiries on one clock, and the one timer armed for the nearest. Belongs to
/// `ExpiryScheduler` (its threading contract: on `queue` only).
// Sendable without checks, so the timer's handler can hold it weakly: see `ExpiryScheduler`.
private final class ExpiryTimeline: @unchecked Sendable {
    private let read: () -> Duration
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
        read: @escaping () -> Duration,
        queue: DispatchQueue,
        batch: Int,
        due: @escaping (_ expiries: [(name: String, instant: Duration)]) -> Void
    ) {
        self.timers = timers
        self.read = read
        self.queue = queue
        self.batch = max(batch, 1)
        self.due = due
    }

    var count: Int { pending.count }

    func instant(of name: String) -> Duration? { pending[StopwatchKey(name)]?.instant }

    func update(_ name: String, _ instant: Duration?) {
        let key = StopwatchKey(name)
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
        if let armedAt, armedAt <= nearest, armedAt > read() { return }
        let timer = self.timer ?? makeTimer()
        timer.schedule(at: nearest, now: read())
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
        let now = read()
        while dueNow.count < batch, let take = deadlines.removeDue(at: now) {
            take()
        }
        let expiries = dueNow
        dueNow = []
        if !expiries.isEmpty { due(expiries) }
        isFiring = false
        // More due already: the rest of a burst beyond the batch, or the next phase of a
        // cycle that the service left due (a cycle several phases behind after a suspend).
        if let nearest = deadlines.nearest, nearest <= read() {
            queue.async { [weak self] in self?.fire() }
        } else {
            arm()
        }
    }
}
