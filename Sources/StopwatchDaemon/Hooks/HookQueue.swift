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
    /// The waiting jobs, oldest at `head`; slots before `head` are spent (nil).
    private var slots: [Job?] = []
    private var head = 0

    init(maximumRunning: Int) {
        precondition(maximumRunning >= 1)
        self.maximumRunning = maximumRunning
    }

    var waiting: Int { slots.count - head }
    var isIdle: Bool { running == 0 && waiting == 0 }

    /// A job to run: returned to be started now when a slot is free (the slot is taken for
    /// it; call `finished` when it ends), else it waits and nil is returned.
    mutating func submit(_ job: Job) -> Job? {
        if running < maximumRunning {
            running += 1
            return job
        }
        slots.append(job)
        return nil
    }

    /// A run ended (or could not start): its slot goes to the oldest waiting job, returned
    /// to be started.
    mutating func finished() -> Job? {
        precondition(running > 0, "finished() with nothing running")
        running -= 1
        guard let next = popOldest() else { return nil }
        running += 1
        return next
    }

    private mutating func popOldest() -> Job? {
        guard head < slots.count else { return nil }
        let job = slots[head]
        slots[head] = nil
        head += 1
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= slots.count {
            slots.removeFirst(head)
            head = 0
        }
        return job
    }
}
