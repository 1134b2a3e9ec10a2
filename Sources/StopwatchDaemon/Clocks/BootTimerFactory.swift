import Dispatch
import StopWatchCore

/// Makes `BootTimer`s; should the kernel refuse a `timerfd` (out of descriptors), a
/// libdispatch timer instead, which is late by the time spent in suspend, and says so.
struct BootTimerFactory: TickTimerFactory {
    let logger: Logger

    func makeTimer(on queue: DispatchQueue, handler: @escaping @Sendable (any TickTimer, Duration) -> Void) -> any TickTimer {
        do {
            return try BootTimer(queue: queue, handler: handler)
        } catch {
            logger.warning("cannot make a CLOCK_BOOTTIME timer (\(error)); countdowns that end during a suspend are told of it late")
            return DispatchTickTimerFactory().makeTimer(on: queue, handler: handler)
        }
    }
}
