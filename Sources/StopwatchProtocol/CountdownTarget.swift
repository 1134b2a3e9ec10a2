/// How long a countdown may be (SPEC §3): 1 ms to 366 days, here so that the daemon's
/// check and `swctl`'s message cannot drift apart.
package enum CountdownTarget {
    package static let range: ClosedRange<Duration> = .milliseconds(1) ... .seconds(366 * 86_400)

    /// The range as a person reads it.
    package static let rule = "from 1ms to 366 days (8784h)"

    /// A target given in milliseconds, when in range.
    package static func duration(milliseconds: Int64) -> Duration? {
        guard milliseconds >= 1, milliseconds <= range.upperBound.milliseconds else { return nil }
        return .milliseconds(milliseconds)
    }
}
