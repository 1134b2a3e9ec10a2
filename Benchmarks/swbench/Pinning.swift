import Glibc
import LinuxSystem

/// Processes and the calling thread held on one CPU, so that a round trip between them is the
/// work both sides do and not the scheduler's choice of core: on a 2-core VM a wake-up on the
/// other core costs about 25 µs each way, and whether it happens is chance (issue 30).
/// `release` gives each process back the affinity its first thread had, and the calling
/// thread its own.
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
        let pinned = CPUAffinity(cpus: [cpu])
        do throws(Errno) {
            callerAffinity = try CPUAffinity.of(thread: 0)
            processes = try pids.map { (pid) throws(Errno) in (pid, try CPUAffinity.of(thread: pid)) }
            try pinned.apply(toThread: 0)
            for pid in pids {
                for thread in ProcFS.threadIDs(of: pid) { try Self.apply(pinned, to: thread) }
            }
        } catch {
            throw BenchError("cannot pin to CPU \(cpu): \(error)")
        }
    }

    /// The affinities from before, on every thread each process has now.
    func release() throws(BenchError) {
        do throws(Errno) {
            try callerAffinity.apply(toThread: 0)
            for (pid, affinity) in processes {
                for thread in ProcFS.threadIDs(of: pid) { try Self.apply(affinity, to: thread) }
            }
        } catch {
            throw BenchError("cannot unpin: \(error)")
        }
    }

    /// A thread that has ended since it was listed needs nothing.
    private static func apply(_ affinity: CPUAffinity, to thread: pid_t) throws(Errno) {
        do {
            try affinity.apply(toThread: thread)
        } catch where error == Errno(ESRCH) {
        }
    }
}
