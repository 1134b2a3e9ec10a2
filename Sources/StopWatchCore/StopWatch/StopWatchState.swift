/// Where a stopwatch is in its cycle, and how much it had counted at its last update.
public enum StopWatchState: Equatable, Sendable {
    /// At zero, never started since the last reset.
    case stopped
    /// Counting; the value is the elapsed time at the last update (a command or a tick).
    case counting(Duration)
    /// Paused; the value is the elapsed time when it was stopped.
    case pause(Duration)

    /// The elapsed time this state records.
    public var elapsed: Duration {
        switch self {
        case .stopped: .zero
        case .counting(let elapsed), .pause(let elapsed): elapsed
        }
    }

    public var isCounting: Bool {
        if case .counting = self { true } else { false }
    }

    public var isPaused: Bool {
        if case .pause = self { true } else { false }
    }
}
