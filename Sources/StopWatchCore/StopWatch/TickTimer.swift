import Dispatch

/// A one-shot timer that a counting stopwatch re-arms at each tick boundary.
public protocol TickTimer: AnyObject, Sendable {
    /// Arms (or re-arms) the timer to fire once when the clock reads `deadline`; `now` is
    /// what the clock reads at the time of the call, since the timer has no clock of its own.
    func schedule(at deadline: Duration, now: Duration)
    /// Disarms the timer for good: its handler is not called after this returns on the
    /// timer's queue.
    func cancel()
}

/// Makes the timers a stopwatch counts with: `DispatchTickTimerFactory` in production,
/// a manual one in tests.
public protocol TickTimerFactory: Sendable {
    /// A timer whose `handler` runs on `queue` with the timer and the deadline it fired for.
    func makeTimer(
        on queue: DispatchQueue,
        handler: @escaping @Sendable (_ timer: any TickTimer, _ deadline: Duration) -> Void
    ) -> any TickTimer
}
