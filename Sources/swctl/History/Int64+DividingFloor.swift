extension Int64 {
    /// Division rounding toward minus infinity: an instant before the epoch still falls in
    /// the second (or day) that contains it. `divisor` is positive.
    package func dividingFloor(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return self % divisor < 0 ? quotient - 1 : quotient
    }
}
