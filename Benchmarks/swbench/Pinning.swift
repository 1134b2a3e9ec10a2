import Glibc
import LinuxSystem

/// Processes and the calling thread held on one CPU, so that a round trip between them is the
/// work both sides do and not the scheduler's choice of core: on a 2-core VM a wake-up on the
/// other core costs about 25 µs each way, and whether it happens is chance (issue 30).
/// `release` gives each process back the affinity its first thread had, and the calling
/// thread its own. A pinning that fails part way is undone before the error is thrown: the
/// calling thread's affinity passes to every process swbench starts later.
struct Pinning {
    private let processes: [(pid: pid_t, affinity: CPUAffinity)]
    private let callerAffinity: CPUAffinity

    /// The first CPU the calling thread may run on.
    static func firstAllowedCPU() throws(BenchError) -> Int {
        let affinity: CPUAffinity
        do {
            affinity = try CPUAffinity.of(thread: 0)
        } catch {
            throw BenchError("sched_getaffinity: \(error)")
        }
        guard let cpu = affinity.cpus.first else { throw BenchError("the calling thread may run on no CPU") }
        return cpu
    }

    /// Every thread of each of `pids`, and the calling thread, on `cpu`. Threads the processes
    /// start meanwhile inherit it.
    init(_ pids: [pid_t], on cpu: Int) throws(BenchError) {
        do throws(Errno) {
            callerAffinity = try CPUAffinity.of(thread: 0)
            processes = try pids.map { (pid) throws(Errno) in (pid, try CPUAffinity.of(thread: pid)) }
        } catch {
            throw BenchError("cannot read the affinities to pin to CPU \(cpu): \(error)")
        }
        let pinned = CPUAffinity(cpus: [cpu])
        do throws(BenchError) {
            do {
                try pinned.apply(toThread: 0)
            } catch {
                throw BenchError("cannot pin swbench's thread to CPU \(cpu): \(error)")
            }
            for pid in pids { try Self.apply(pinned, toEveryThreadOf: pid) }
        } catch {
            try? release()
            throw error
        }
    }

    /// The affinities from before, on every thread each process has now.
    func release() throws(BenchError) {
        do {
            try callerAffinity.apply(toThread: 0)
        } catch {
            throw BenchError("cannot unpin swbench's thread: \(error)")
        }
        for (pid, affinity) in processes { try Self.apply(affinity, toEveryThreadOf: pid) }
    }

    /// `affinity` on each thread of `pid`, listed again until a listing finds none it has not
    /// set: a thread started meanwhile by one not yet set would otherwise keep the old one.
    /// A thread that has ended since it was listed needs nothing.
    private static func apply(_ affinity: CPUAffinity, toEveryThreadOf pid: pid_t) throws(BenchError) {
        var done: Set<pid_t> = []
        while true {
            let threads = ProcFS.threadIDs(of: pid)
            guard !threads.isEmpty else { throw BenchError("cannot list the threads of process \(pid) in /proc") }
            let new = threads.filter { !done.contains($0) }
            guard !new.isEmpty else { return }
            for thread in new {
                do {
                    try affinity.apply(toThread: thread)
                } catch where error == Errno(ESRCH) {
                } catch {
                    throw BenchError("cannot set the affinity of thread \(thread) of process \(pid): \(error)")
                }
                done.insert(thread)
            }
        }
    }
}
