import Glibc

/// The context switches of each thread of a process at one moment, to count its wake-ups
/// between two moments: a thread that sleeps and wakes switches out once per sleep.
struct ThreadSwitchCounts {
    private let counts: [pid_t: Int]

    /// Reads /proc/PID/task/*/status.
    init(of pid: pid_t) {
        var counts: [pid_t: Int] = [:]
        for thread in ProcFS.threadIDs(of: pid) {
            counts[thread] = ProcFS.contextSwitches(of: thread, in: pid)
        }
        self.counts = counts
    }

    /// Switches since `earlier`, summed over all threads: a thread started since counts in
    /// full, and a thread that has ended since counts one (its exit).
    func wakeups(since earlier: ThreadSwitchCounts) -> Int {
        var total = 0
        for (thread, count) in counts {
            total += count - (earlier.counts[thread] ?? 0)
        }
        total += earlier.counts.keys.count { counts[$0] == nil }
        return total
    }

    var threadCount: Int { counts.count }
}
