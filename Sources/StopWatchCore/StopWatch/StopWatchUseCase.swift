import Dispatch

/// A stopwatch: `StopWatchCommand`s in, `StopWatchSnapshot`s out.
public typealias StopWatchUseCase = UseCase<StopWatchCommand>

extension UseCase where C == StopWatchCommand {
    /// A stopwatch that counts on `clock` and, while counting, publishes a tick each time its
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
            let onTick: @Sendable (any TickTimer, Duration) -> Void = { timer, deadline in
                let now = clock.now()
                guard now >= deadline else {
                    // Fired early by the timer's own clock: wait for ours.
                    timer.schedule(at: deadline, now: now)
                    return
                }
                let snapshot = store.update { snapshot in
                    snapshot = snapshot.ticked(at: now)
                    return snapshot
                }
                if let next = snapshot.nextTick(after: now, every: tick) {
                    // The clock read again: publishing took time, and a timer armed for
                    // "next - now" from a stale now would fire that much late.
                    timer.schedule(at: next, now: clock.now())
                }
            }

            var timer: (any TickTimer)?
            func matchTimer(to snapshot: StopWatchSnapshot, now: Duration) {
                if store.isObserved, let next = snapshot.nextTick(after: now, every: tick) {
                    guard timer == nil else { return }
                    let newTimer = timers.makeTimer(on: store.queue, handler: onTick)
                    newTimer.schedule(at: next, now: now)
                    timer = newTimer
                } else {
                    timer?.cancel()
                    timer = nil
                }
            }

            matchTimer(to: store.currentState, now: clock.now())
            store.whenObservationChanges {
                matchTimer(to: store.currentState, now: clock.now())
            }
            return { command in
                let now = clock.now()
                let snapshot = try store.update { (snapshot) throws(InvalidTransition) in
                    snapshot = try snapshot.applying(command, at: now)
                    return snapshot
                }
                matchTimer(to: snapshot, now: now)
            }
        }
    }
}
