import LinuxSystem
@testable import StopwatchDaemon

/// A wall clock set by hand, in milliseconds since the epoch.
final class ManualWallClock: WallClock {
    private let milliseconds: Locked<Int64>

    init(_ milliseconds: Int64) {
        self.milliseconds = Locked(milliseconds)
    }

    func nowMilliseconds() -> Int64 { milliseconds.withLock { $0 } }

    func advance(by step: Int64) { milliseconds.withLock { $0 += step } }
}
