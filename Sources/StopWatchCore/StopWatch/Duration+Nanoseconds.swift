extension Duration {
    /// The whole nanoseconds in this duration, rounded toward zero (enough for 292 years).
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The whole milliseconds in this duration, rounded toward zero.
    public var milliseconds: Int64 {
        nanoseconds / 1_000_000
    }
}
