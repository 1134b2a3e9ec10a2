import LinuxSystem
import StopWatchCore

/// The clocks persistence needs, read together: to store a counting stopwatch so that it
/// goes on counting after a restart (same boot: `CLOCK_BOOTTIME`, exact) or a reboot (the
/// wall clock, which is all that survives one).
package struct ClockReading: Equatable, Sendable {
    /// `CLOCK_BOOTTIME`: the clock stopwatches count on.
    package var boot: Duration
    /// `CLOCK_MONOTONIC`: the clock of stopwatches that leave sleep out.
    package var awake: Duration
    /// `CLOCK_REALTIME`: time since the Unix epoch.
    package var wall: Duration
    /// `/proc/sys/kernel/random/boot_id`: tells one boot from the next.
    package var bootID: String

    /// `awake`: nil reads as `boot` (no suspend since boot).
    package init(boot: Duration, awake: Duration? = nil, wall: Duration, bootID: String) {
        self.boot = boot
        self.awake = awake ?? boot
        self.wall = wall
        self.bootID = bootID
    }

    /// The two clocks a stopwatch may count on.
    package var instant: StopWatchInstant { StopWatchInstant(boot: boot, awake: awake) }

    /// The clocks of this machine now.
    package static func now() -> ClockReading {
        ClockReading(boot: Posix.clockTime(.boot), awake: Posix.clockTime(.monotonic), wall: Posix.clockTime(.realtime), bootID: currentBootID)
    }

    /// Read once: it cannot change while this process runs.
    package static let currentBootID: String = {
        let text = (try? FileSystem.contents(of: "/proc/sys/kernel/random/boot_id", limit: 256)).map {
            String(decoding: $0, as: UTF8.self)
        }
        return text?.trimmingWhitespace ?? "unknown"
    }()
}

extension String {
    var trimmingWhitespace: String {
        let scalars = unicodeScalars.drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        var trimmed = String(String.UnicodeScalarView(scalars))
        while let last = trimmed.last, last.isWhitespace { trimmed.removeLast() }
        return trimmed
    }
}
