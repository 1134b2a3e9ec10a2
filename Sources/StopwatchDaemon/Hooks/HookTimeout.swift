/// When a hook run is stopped (SPEC §4): SIGTERM to its process group once it has run for
/// `timeout`, and SIGKILL `grace` after that. A value on elapsed time, with no clock: its
/// owner asks `check` at the times `nextCheck` names, and tests pass the times by hand.
struct HookTimeout {
    enum Action: Equatable {
        case terminate
        case kill
    }

    private enum State {
        case running
        /// SIGTERM was sent at this elapsed time.
        case terminated(at: Duration)
        case killed
    }

    let timeout: Duration
    let grace: Duration
    private var state = State.running

    init(timeout: Duration, grace: Duration = .seconds(2)) {
        self.timeout = timeout
        self.grace = grace
    }

    /// The elapsed time at which `check` will next have something to do; nil once killed.
    var nextCheck: Duration? {
        switch state {
        case .running: timeout
        case .terminated(let at): at + grace
        case .killed: nil
        }
    }

    /// Whether it was stopped for running too long.
    var hasTimedOut: Bool {
        if case .running = state { return false }
        return true
    }

    /// What to do now that the run has lasted `elapsed`, if anything.
    mutating func check(elapsed: Duration) -> Action? {
        switch state {
        case .running where elapsed >= timeout:
            state = .terminated(at: elapsed)
            return .terminate
        case .terminated(let at) where elapsed >= at + grace:
            state = .killed
            return .kill
        default:
            return nil
        }
    }
}
