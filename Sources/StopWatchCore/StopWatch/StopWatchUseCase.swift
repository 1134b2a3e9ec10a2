import Dispatch

/// A stopwatch: `StopWatchCommand`s in, `StopWatchSnapshot`s out.
public typealias StopWatchUseCase = UseCase<StopWatchCommand>

extension UseCase where C == StopWatchCommand {
    /// A stopwatch that counts on `clock` (its boot clock, or its awake clock for one that
    /// leaves sleep out: `StopWatchSnapshot.countsSleep`) and, while counting, publishes a tick each time its
    /// elapsed time crosses a multiple of `tick`.
    ///
    /// Its timer comes from `timers` when it counts and someone subscribes to its states, and
    /// is cancelled when it stops or the last subscriber leaves: no timer exists while nothing
    /// counts, and none while nobody watches (replies compute elapsed from the clock, so only
    /// subscribers need ticks). The cost of ticking follows the watchers.
    ///
    /// - Parameters:
    ///   - initial: where to start, e.g. a stopwatch restored from storage, still counting.
    ///   - clock: `BootClock` in production; a manual clock in tests.
    ///   - timers: `DispatchTickTimerFactory` in production; manual timers in tests.
    ///   - tick: the interval between published updates while counting; at least 1 ns.
    public convenience init(
        _ initial: StopWatchSnapshot = .stopped,
        clock: any StopWatchClock = BootClock(),
        timers: any TickTimerFactory = DispatchTickTimerFactory(),
        tick: Duration = .seconds(1),
        targetQueue: DispatchQueue? = nil
    ) {
        precondition(tick >= .nanoseconds(1), "the tick interval must be at least a nanosecond")
        self.init(initial, targetQueue: targetQueue) { store in
            // Timers take deadlines on the boot clock (`now()`), whichever clock the stopwatch
            // counts on: its next tick, a span of its own clock from now, is placed that far
            // ahead on the boot clock. (Through a suspend, a libdispatch timer stops as the
            // awake clock does; the handler re-reads the clocks either way.)
            @Sendable func nextTickDeadline(of snapshot: StopWatchSnapshot, at instant: StopWatchInstant) -> Duration? {
                let reading = snapshot.reading(at: instant)
                guard let next = snapshot.nextTick(after: reading, every: tick) else { return nil }
                return instant.boot + (next - reading)
            }

            let onTick: @Sendable (any TickTimer, Duration) -> Void = { timer, deadline in
                let instant = clock.instant()
                guard instant.boot >= deadline else {
                    // Fired early by the timer's own clock: wait for ours.
                    timer.schedule(at: deadline, now: instant.boot)
                    return
                }
                let snapshot = store.update { snapshot in
                    snapshot = snapshot.ticked(at: snapshot.reading(at: instant))
                    return snapshot
                }
                if let next = nextTickDeadline(of: snapshot, at: instant) {
                    // The clock read again: publishing took time, and a timer armed for
                    // "next - now" from a stale now would fire that much late.
                    timer.schedule(at: next, now: clock.now())
                }
            }

            var timer: (any TickTimer)?
            func matchTimer(to snapshot: StopWatchSnapshot, at instant: StopWatchInstant) {
                if store.isObserved, let next = nextTickDeadline(of: snapshot, at: instant) {
                    guard timer == nil else { return }
                    let newTimer = timers.makeTimer(on: store.queue, handler: onTick)
                    newTimer.schedule(at: next, now: instant.boot)
                    timer = newTimer
                } else {
                    timer?.cancel()
                    timer = nil
                }
            }

            matchTimer(to: store.currentState, at: clock.instant())
            store.whenObservationChanges {
                matchTimer(to: store.currentState, at: clock.instant())
            }
            return { command in
                let instant = clock.instant()
                let snapshot = try store.update { (snapshot) throws(InvalidTransition) in
                    snapshot = try snapshot.applying(command, at: instant)
                    return snapshot
                }
                matchTimer(to: snapshot, at: instant)
            }
        }
    }
}
