/// The pool and queue of hook runs (SPEC §4): at most `maximumRunning` run at once, at
/// most `maximumWaiting` wait their turn, and beyond that the oldest waiting is dropped.
///
/// A value with no process, clock or lock in it: each method changes the state and returns
/// what its owner is to do afterwards (start a run, log a line), so tests drive it alone.
/// Drops are told in aggregate, once when a burst begins and once, with the count, when the
/// queue has drained again: 10,000 expiries at one instant make two log lines, not 10,000.
struct HookQueue<Job> {
    enum Action {
        /// Run this job now (a slot is taken for it; call `finished` when it ends).
        case start(Job)
        /// The queue is full and the oldest waiting are being dropped, from now on.
        case startedDropping
        /// The burst is over (nothing waits any more): `count` jobs were dropped in it.
        case dropped(count: Int)
    }

    /// Whether jobs are being dropped, and how many so far in this burst.
    private enum Dropping {
        case no
        case yes(count: Int)
    }

    let maximumRunning: Int
    let maximumWaiting: Int
    private(set) var running = 0
    /// The waiting jobs, oldest at `head`; slots before `head` are spent (nil).
    private var slots: [Job?] = []
    private var head = 0
    private var dropping = Dropping.no

    init(maximumRunning: Int, maximumWaiting: Int) {
        precondition(maximumRunning >= 1 && maximumWaiting >= 0)
        self.maximumRunning = maximumRunning
        self.maximumWaiting = maximumWaiting
    }

    var waiting: Int { slots.count - head }
    var isIdle: Bool { running == 0 && waiting == 0 }

    /// A job to run: at once when a slot is free, else it waits (the oldest waiting is
    /// dropped to make room, or the job itself when nothing may wait).
    mutating func submit(_ job: Job) -> [Action] {
        if running < maximumRunning {
            running += 1
            return [.start(job)]
        }
        var actions: [Action] = []
        if waiting >= maximumWaiting {
            if waiting > 0 { _ = popOldest() }
            actions += lost(1)
        }
        if maximumWaiting > 0 { slots.append(job) }
        return actions
    }

    /// `count` jobs lost before they could be submitted (events dropped before their hooks
    /// were read), counted with the drops.
    mutating func lost(_ count: Int) -> [Action] {
        guard count > 0 else { return [] }
        switch dropping {
        case .no:
            dropping = .yes(count: count)
            // Nothing runs or waits: no later `finished` would tell the count.
            return isIdle ? [.startedDropping] + endOfBurst() : [.startedDropping]
        case .yes(let sofar):
            let (sum, overflow) = sofar.addingReportingOverflow(count)
            dropping = .yes(count: overflow ? Int.max : sum)
            return isIdle ? endOfBurst() : []
        }
    }

    /// A run ended (or could not start): its slot goes to the oldest waiting job.
    mutating func finished() -> [Action] {
        precondition(running > 0, "finished() with nothing running")
        running -= 1
        var actions: [Action] = []
        if let next = popOldest() {
            running += 1
            actions.append(.start(next))
        }
        if waiting == 0 { actions += endOfBurst() }
        return actions
    }

    private mutating func endOfBurst() -> [Action] {
        guard case .yes(let count) = dropping else { return [] }
        dropping = .no
        return [.dropped(count: count)]
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
