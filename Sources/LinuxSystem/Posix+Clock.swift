import Glibc

extension Posix {
    package enum Clock {
        /// `CLOCK_BOOTTIME`: monotonic, counts time in suspend.
        case boot
        /// `CLOCK_MONOTONIC`: monotonic, stops in suspend.
        case monotonic
        /// `CLOCK_REALTIME`: the wall clock; can jump both ways.
        case realtime

        var id: clockid_t {
            switch self {
            case .boot: CLOCK_BOOTTIME
            case .monotonic: CLOCK_MONOTONIC
            case .realtime: CLOCK_REALTIME
            }
        }
    }

    /// Reads `clock`. `clock_gettime` fails only for a clock id the kernel lacks, and all
    /// three exist on every kernel this runs on, so a failure is a broken system.
    package static func clockTime(_ clock: Clock) -> Duration {
        var time = timespec()
        let result = clock_gettime(clock.id, &time)
        precondition(result == 0, "clock_gettime(\(clock)) failed: errno \(errno)")
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}
