import LinuxSystem
import Dispatch
import StopWatchCore

/// A clock and a timer factory in one, moved by hand: tests drive time without sleeping.
///
///     let time = ManualTime()
///     let stopWatch = StopWatchUseCase(clock: time, timers: time, tick: .seconds(1))
///     time.advance(by: .seconds(3))   // fires the ticks at 1 s, 2 s and 3 s, each on time
///     time.move(by: .seconds(1.5))    // the clock moves, the timer is late…
///     time.fireDueTimers()            // …and fires now
///     time.suspend(for: .seconds(3600)) // the machine sleeps an hour (see `bootTimers`):
///                                       // `now()` moves, `awakeNow()` does not
///
/// Timers run their handler synchronously on their queue (`queue.sync`): call these from
/// the test, never from that queue.
public final class ManualTime: StopWatchClock, TickTimerFactory, Sendable {
    /// The timers are held weakly: a timer's handler holds its stopwatch's clock, which is
    /// this object, and a strong reference back would keep both alive for ever.
    /// `now` is the boot clock; the awake clock is `now - asleep`.
    private let state: Locked<(now: Duration, asleep: Duration, timers: [WeakTimer], made: Int)>

    // Unchecked sendability is safe: only read and written under `state`'s lock, and
    // ManualTimer itself is Sendable.
    private struct WeakTimer: @unchecked Sendable {
        weak var timer: ManualTimer?
    }

    public init(now: Duration = .zero) {
        state = Locked((now, .zero, [], 0))
    }

    /// The boot clock: counts simulated suspends.
    public func now() -> Duration {
        state.withLock { $0.now }
    }

    /// The awake clock: as `now()`, less the time spent in simulated suspends.
    public func awakeNow() -> Duration {
        state.withLock { $0.now - $0.asleep }
    }

    /// The timers made so far that still exist (the stopwatch drops one when it stops).
    public var timers: [ManualTimer] {
        state.withLock { $0.timers.compactMap(\.timer) }
    }

    /// How many timers were ever made.
    public var timersMade: Int {
        state.withLock { $0.made }
    }

    /// The timers not cancelled yet.
    public var liveTimers: [ManualTimer] {
        timers.filter { !$0.isCancelled }
    }

    public func makeTimer(
        on queue: DispatchQueue,
        handler: @escaping @Sendable (any TickTimer, Duration) -> Void
    ) -> any TickTimer {
        makeTimer(on: queue, clock: .monotonic, handler: handler)
    }

    /// Timers on the boot clock itself, as a `timerfd` on `CLOCK_BOOTTIME` is: through a
    /// `suspend` their deadline stays, so one that fell during it fires on resume. (Those
    /// `makeTimer` makes run on the monotonic clock, as a `DispatchSourceTimer` does.)
    public var bootTimers: any TickTimerFactory {
        BootTimers(time: self)
    }

    /// Timers on the awake clock, as a `timerfd` on `CLOCK_MONOTONIC` is: their deadlines
    /// are readings of `awakeNow()`, which a `suspend` does not move.
    public var awakeTimers: any TickTimerFactory {
        BootTimers(time: self, clock: .awake)
    }

    private struct BootTimers: TickTimerFactory {
        let time: ManualTime
        var clock: ManualTimer.Clock = .boot

        func makeTimer(on queue: DispatchQueue, handler: @escaping @Sendable (any TickTimer, Duration) -> Void) -> any TickTimer {
            time.makeTimer(on: queue, clock: clock, handler: handler)
        }
    }

    private func makeTimer(
        on queue: DispatchQueue,
        clock: ManualTimer.Clock,
        handler: @escaping @Sendable (any TickTimer, Duration) -> Void
    ) -> ManualTimer {
        let timer = ManualTimer(queue: queue, clock: clock, handler: handler)
        state.withLock {
            $0.timers.removeAll { $0.timer == nil }
            $0.timers.append(WeakTimer(timer: timer))
            $0.made += 1
        }
        return timer
    }

    /// Moves the clock without firing anything: the timers are late.
    public func move(by duration: Duration) {
        precondition(duration >= .zero, "a monotonic clock does not go back")
        state.withLock { $0.now += duration }
    }

    /// The machine sleeps for `duration`, then resumes: the clock (the boot clock, which
    /// counts suspend) jumps ahead, the monotonic clock (`awakeNow()`) does not. So a
    /// monotonic timer fires `duration` later than its deadline said, an awake timer
    /// (`awakeTimers`) is as far from its deadline as before, while a boot timer
    /// (`bootTimers`) whose deadline fell during the sleep fires now, on resume.
    public func suspend(for duration: Duration) {
        precondition(duration >= .zero, "a monotonic clock does not go back")
        state.withLock {
            $0.now += duration
            $0.asleep += duration
        }
        for timer in liveTimers where timer.clock == .monotonic {
            timer.postpone(by: duration)
        }
        fireDueTimers()
    }

    /// Fires, once each, the timers due now, at the current clock reading.
    public func fireDueTimers() {
        let now = instant()
        for timer in liveTimers where timer.isDue(at: now) {
            timer.fire()
        }
    }

    /// Runs time forward by `duration`, firing every timer exactly at its deadline on the
    /// way, as a perfect timer would (a re-armed timer fires again if due in the span).
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "a monotonic clock does not go back")
        let end = now() + duration
        let awakeLag = state.withLock { $0.asleep }
        while let next = liveTimers.compactMap({ $0.bootDeadline(awakeLag: awakeLag) }).filter({ $0 <= end }).min() {
            state.withLock { $0.now = max($0.now, next) }
            fireDueTimers()
        }
        state.withLock { $0.now = end }
    }
}
