import CLinux
import Glibc

/// A `timerfd`: a timer on one of the kernel's clocks that is read like a file, so epoll or a
/// dispatch read source can wait on it. Unlike a `DispatchSourceTimer` (monotonic clock,
/// stopped in suspend) it can run on `CLOCK_BOOTTIME`, and on `CLOCK_REALTIME` it can report
/// that the wall clock was set.
package struct TimerDescriptor {
    package let descriptor: FileDescriptor

    package struct ArmingOptions: OptionSet {
        package let rawValue: CInt
        package init(rawValue: CInt) { self.rawValue = rawValue }
        /// `TFD_TIMER_CANCEL_ON_SET`: on `CLOCK_REALTIME`, a read fails with `ECANCELED` once
        /// the clock is set (by hand, or stepped by NTP).
        package static let cancelOnClockSet = ArmingOptions(rawValue: CInt(TFD_TIMER_CANCEL_ON_SET))
    }

    /// A disarmed, non-blocking, close-on-exec timer on `clock`.
    package static func make(clock: Posix.Clock) throws(Errno) -> TimerDescriptor {
        let raw = try Posix.call { timerfd_create(clock.id, CInt(TFD_NONBLOCK | TFD_CLOEXEC)) }
        return TimerDescriptor(descriptor: FileDescriptor(rawValue: raw))
    }

    /// Arms the timer to expire once at `deadline` on its clock (absolute).
    package func arm(at deadline: Duration, options: ArmingOptions = []) throws(Errno) {
        let seconds = max(deadline, .zero).components.seconds
        let nanoseconds = max(deadline, .zero).components.attoseconds / 1_000_000_000
        // A zero it_value would disarm it: the earliest real deadline is 1 ns.
        var value = itimerspec(
            it_interval: timespec(),
            it_value: timespec(tv_sec: Int(seconds), tv_nsec: seconds == 0 && nanoseconds == 0 ? 1 : Int(nanoseconds))
        )
        try Posix.call { timerfd_settime(descriptor.rawValue, CInt(TFD_TIMER_ABSTIME) | options.rawValue, &value, nil) }
    }

    /// How many times it expired since the last read; 0 when it has not (it never blocks).
    /// Throws `Errno.canceled` when armed with `cancelOnClockSet` and the clock was set.
    package func readExpirations() throws(Errno) -> UInt64 {
        var count: UInt64 = 0
        do {
            _ = try Posix.call { read(descriptor.rawValue, &count, MemoryLayout<UInt64>.size) }
        } catch where error == .wouldBlock {
            return 0
        }
        return count
    }

    package func close() {
        descriptor.close()
    }
}
