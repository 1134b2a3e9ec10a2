/// The monotonic clocks of a stopwatch: a reading is the time since some fixed, arbitrary
/// moment. Only differences between readings of the same clock mean anything.
///
/// `now()` is the boot clock, which counts time in suspend: what a stopwatch counts on by
/// default. `awakeNow()` is the awake clock, which stops in suspend: what a stopwatch that
/// leaves sleep out counts on (`StopWatchSnapshot.countsSleep`).
public protocol StopWatchClock: Sendable {
    /// The boot clock.
    func now() -> Duration
    /// The awake clock. Defaults to `now()`: a clock that cannot tell the two apart (no
    /// suspend ever happens on it).
    func awakeNow() -> Duration
}

extension StopWatchClock {
    public func awakeNow() -> Duration { now() }

    /// Both clocks, read one after the other.
    public func instant() -> StopWatchInstant {
        StopWatchInstant(boot: now(), awake: awakeNow())
    }
}

/// One moment as both clocks of a stopwatch read it. A snapshot reads the one it counts on
/// (`StopWatchSnapshot.reading(at:)`); switching clocks needs both.
public struct StopWatchInstant: Equatable, Sendable {
    /// The boot clock (suspend counted).
    public var boot: Duration
    /// The awake clock (suspend left out).
    public var awake: Duration

    public init(boot: Duration, awake: Duration) {
        self.boot = boot
        self.awake = awake
    }

    /// A moment where the two clocks read the same: no suspend has parted them (tests, and
    /// clocks that know of no suspend).
    public init(_ reading: Duration) {
        self.init(boot: reading, awake: reading)
    }

    /// The reading of the boot clock (`countingSleep`) or of the awake clock.
    public func reading(countingSleep: Bool) -> Duration {
        countingSleep ? boot : awake
    }
}
