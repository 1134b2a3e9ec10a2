/// The pool of hook runs (SPEC §4): at most `maximumRunning` run at once, and the others
/// wait their turn, in order. Only a few runs wait here: the runner takes events from the
/// outbox only while fewer than `maximumRunning` wait, so what waits is bounded by that
/// and the hooks of one event (the backlog of events is the outbox's).
///
/// A value with no process, clock or lock in it: each method changes the state and returns
/// the job its owner is to start, so tests drive it alone.
struct HookQueue<Job> {
    let maximumRunning: Int
    private(set) var running = 0
    /// The waiting jobs, oldest first.
    private var jobs = FirstInFirstOut<Job>()

    init(maximumRunning: Int) {
        precondition(maximumRunning >= 1)
        self.maximumRunning = maximumRunning
    }

    var waiting: Int { jobs.count }
    var isIdle: Bool { running == 0 && waiting == 0 }

    /// A job to run: returned to be started now when a slot is free (the slot is taken for
    /// it; call `finished` when it ends), else it waits and nil is returned.
    mutating func submit(_ job: Job) -> Job? {
        if running < maximumRunning {
            running += 1
            return job
        }
        jobs.append(job)
        return nil
    }

    /// A run ended (or could not start): its slot goes to the oldest waiting job, returned
    /// to be started.
    mutating func finished() -> Job? {
        precondition(running > 0, "finished() with nothing running")
        running -= 1
        guard let next = jobs.popFirst() else { return nil }
        running += 1
        return next
    }
}
