import Dispatch
import LinuxSystem
import StopWatchCore

/// A `TickTimer` on a `timerfd` on `CLOCK_BOOTTIME`, read through a dispatch read source:
/// its deadline is an instant of the clock stopwatches count on, suspend included, so what is
/// due at that instant fires on time through a suspend (at resume, if it fell during it). A
/// `DispatchSourceTimer` runs on the monotonic clock, which stops in suspend.
///
/// Made on `CLOCK_MONOTONIC` instead, its deadline is an instant of the awake clock, which
/// stopwatches that leave sleep out count on: a suspend postpones it by its length.
// Sendable without checks: `timer` and `source` are set once in init; `deadline` is `Locked`;
// `timerfd_settime` on the descriptor may be called from any thread, and the descriptor is
// closed only by the source's cancel handler, after which no handler runs and `schedule`
// is not called (its owner cancels it last).
final class BootTimer: TickTimer, @unchecked Sendable {
    private let timer: TimerDescriptor
    private let source: any DispatchSourceRead
    private let deadline = Locked(Duration.zero)

    init(
        clock: Posix.Clock = .boot, queue: DispatchQueue, handler: @escaping @Sendable (any TickTimer, Duration) -> Void
    ) throws(Errno) {
        let timer = try TimerDescriptor.make(clock: clock)
        self.timer = timer
        source = DispatchSource.makeReadSource(fileDescriptor: timer.descriptor.rawValue, queue: queue)
        source.setEventHandler { [weak self] in
            guard let self else { return }
            // Read, or the descriptor stays readable. Zero: re-armed since it was reported.
            guard (try? timer.readExpirations()) ?? 0 > 0 else { return }
            handler(self, self.deadline.withLock { $0 })
        }
        source.setCancelHandler { timer.close() }
        source.activate()
    }

    deinit {
        source.cancel()
    }

    func schedule(at deadline: Duration, now: Duration) {
        self.deadline.withLock { $0 = deadline }
        // Fails only for values out of range, which a clock reading is not.
        try? timer.arm(at: deadline)
    }

    func cancel() {
        source.cancel()
    }
}
