import StopwatchProtocol

extension Stopwatch {
    /// A countdown whose elapsed time has reached its target: at the expiry, in overtime, or
    /// paused past it. (Comparing cannot overflow, whatever the daemon sent.)
    package var hasReachedTarget: Bool {
        guard let targetMs else { return false }
        return elapsedMs >= targetMs
    }

    /// How a stopwatch never started (or removed) reads: what a `current` after a
    /// reconnection shows of one removed meanwhile.
    var isBlank: Bool {
        state == .stopped && elapsedMs == 0 && lapsMs.isEmpty && targetMs == nil
    }
}
