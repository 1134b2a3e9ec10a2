import Dispatch
import LinuxSystem
import StopWatchCore

/// A `TickTimer` on a `timerfd` (`CLOCK_BOOTTIME`, or `CLOCK_MONOTONIC` for the awake clock)
/// waited on in the serving loop's own `epoll`: at its instant the loop's thread, which waits
/// there, runs the handler on the queue itself (`ServingLoop`: `sync` on the idle queue runs
/// on the calling thread). A dispatch read source (`BootTimer`) took two thread hand-offs
/// per expiry, libdispatch's epoll thread and then a worker: wake-ups that cost CPU and, on a
/// busy machine, the time another core takes to run them.
///
/// Threading:
/// - made, and `cancel`led, on the loop's queue (registrations are the queue's);
/// - `schedule` may be called from any thread: it arms the descriptor under the `armed`
///   lock, which `cancel` closes it under, so it never arms a number closed (perhaps
///   another timer's by then);
/// - the handler runs on the queue, from the loop;
/// - the descriptor is closed by `cancel` (or, for a timer dropped without one, in a turn of
///   the queue after `deinit`), once removed from the loop, after which the owner neither
///   schedules it nor hears from it.
// Unchecked Sendable: see "Threading"; `registration` is read and written on the queue only.
final class LoopTimer: TickTimer, @unchecked Sendable {
    private let timer: TimerDescriptor
    private let loop: ServingLoop
    private let queue: DispatchQueue
    /// The deadline armed, and whether the descriptor is closed (`cancel`).
    private let armed = Locked((deadline: Duration.zero, isClosed: false))
    /// The timer's registration with the loop, until cancelled.
    private var registration: ServingLoop.Token?

    /// On `queue`, the loop's.
    init(
        clock: Posix.Clock, loop: ServingLoop, queue: DispatchQueue, handler: @escaping @Sendable (any TickTimer, Duration) -> Void
    ) throws(Errno) {
        dispatchPrecondition(condition: .onQueue(queue))
        let timer = try TimerDescriptor.make(clock: clock)
        self.timer = timer
        self.loop = loop
        self.queue = queue
        do throws(Errno) {
            registration = try loop.add(timer.descriptor, for: .readable) { [weak self] _ in
                guard let self else { return }
                // Read, or the level-triggered descriptor stays ready. Zero: re-armed since.
                guard (try? timer.readExpirations()) ?? 0 > 0 else { return }
                handler(self, armed.withLock { $0.deadline })
            }
        } catch {
            timer.close()
            throw error
        }
    }

    deinit {
        // Cancelled: closed already. (No `schedule` can come now: nobody holds it.)
        guard let registration else { return }
        let (loop, timer) = (self.loop, self.timer)
        queue.async {
            loop.remove(registration)
            timer.close()
        }
    }

    func schedule(at deadline: Duration, now: Duration) {
        armed.withLock { armed in
            guard !armed.isClosed else { return }
            armed.deadline = deadline
            // Fails only for values out of range, which a clock reading is not.
            try? timer.arm(at: deadline)
        }
    }

    /// On the queue.
    func cancel() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let registration else { return }
        self.registration = nil
        loop.remove(registration)
        armed.withLock { armed in
            armed.isClosed = true
            timer.close()
        }
    }
}

/// Makes `LoopTimer`s on `clock` in the serving loop, for timers made and cancelled on the
/// loop's queue only (the `ExpiryScheduler`'s, the `StatusReporter`'s); should that fail (out of descriptors, or
/// epoll's watches), a `BootTimerFactory`'s timer, a dispatch read source, logged.
struct LoopTimerFactory: TickTimerFactory {
    let loop: ServingLoop
    let logger: Logger
    var clock: Posix.Clock = .boot

    /// On `queue`, the loop's.
    func makeTimer(on queue: DispatchQueue, handler: @escaping @Sendable (any TickTimer, Duration) -> Void) -> any TickTimer {
        do {
            return try LoopTimer(clock: clock, loop: loop, queue: queue, handler: handler)
        } catch {
            logger.warning("cannot wait for a timer in the serving loop (\(error)); a dispatch read source stands in for it")
            return BootTimerFactory(logger: logger, clock: clock).makeTimer(on: queue, handler: handler)
        }
    }
}
