/// When the daemon is to exit on idle (`--exit-idle`), as a pure state machine: it is told
/// whether the daemon is busy and what the clock reads, and says what to do with the one
/// timer; `IdleExit` does it.
///
/// The idle period starts when the last reason to stay ended (the first check that finds
/// none), and ends in an exit only if the check at the timer still finds none: a busy
/// spell that was not reported (or whose report is still queued) keeps the daemon up.
struct IdleExitMachine {
    enum Action: Equatable {
        /// Arm the timer (or re-arm it) to fire at this instant.
        case arm(at: Duration)
        /// Disarm the timer: busy again.
        case disarm
        /// Exit now: idle since this instant, the whole period.
        case exit(idleSince: Duration)
        /// Nothing to do.
        case none
    }

    private enum State: Equatable {
        case busy
        case idle(since: Duration)
        /// Told to exit: nothing changes that any more.
        case exiting
    }

    /// How long the daemon must stay idle before it exits.
    let period: Duration
    /// Busy until the first check says otherwise: the daemon starts with work (restoring,
    /// the client whose connection started it).
    private var state = State.busy

    init(period: Duration) {
        self.period = period
    }

    /// Whether the machine has said to exit.
    var isExiting: Bool { state == .exiting }

    /// Something that keeps the daemon busy may have begun or ended; `isBusy` is how it is now.
    mutating func activityChanged(isBusy: Bool, now: Duration) -> Action {
        switch (state, isBusy) {
        case (.exiting, _), (.busy, true), (.idle, false):
            return .none
        case (.busy, false):
            state = .idle(since: now)
            return .arm(at: deadline(since: now))
        case (.idle, true):
            state = .busy
            return .disarm
        }
    }

    /// The timer fired; `isBusy` is how the daemon is now.
    mutating func timerFired(isBusy: Bool, now: Duration) -> Action {
        guard case .idle(let since) = state else { return .none }
        if isBusy {
            // Busy with nothing reported yet: its end will be, and arms the timer again.
            state = .busy
            return .none
        }
        let deadline = deadline(since: since)
        // Early by this clock (the timer runs on its own, with its own rounding): wait the rest.
        guard now >= deadline else { return .arm(at: deadline) }
        state = .exiting
        return .exit(idleSince: since)
    }

    private func deadline(since: Duration) -> Duration {
        // Both are bounded (a clock reading; at most 24 hours): no overflow.
        since + period
    }
}
