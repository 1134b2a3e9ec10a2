import Dispatch
import LinuxSystem
import StopWatchCore

/// Makes `BootTimer`s on `clock` (`CLOCK_BOOTTIME`, or `CLOCK_MONOTONIC` for the awake
/// clock); should the kernel refuse a `timerfd` (out of descriptors), a libdispatch timer
/// instead, which runs on the monotonic clock: for the boot clock it is late by the time
/// spent in suspend, and says so.
struct BootTimerFactory: TickTimerFactory {
    let logger: Logger
    var clock: Posix.Clock = .boot

    func makeTimer(on queue: DispatchQueue, handler: @escaping @Sendable (any TickTimer, Duration) -> Void) -> any TickTimer {
        do {
            return try BootTimer(clock: clock, queue: queue, handler: handler)
        } catch {
            if clock == .boot {
                logger.warning("cannot make a CLOCK_BOOTTIME timer (\(error)); countdowns that end during a suspend are told of it late")
            } else {
                logger.warning("cannot make a CLOCK_MONOTONIC timer (\(error)); a libdispatch timer stands in for it")
            }
            return DispatchTickTimerFactory().makeTimer(on: queue, handler: handler)
        }
    }
}
