import Glibc
import LinuxSystem

/// Samples another process's resident memory (VmRSS) from a thread of its own, every
/// `interval`, until `finish()`: the peak of a process while it works, not after.
final class ResidentSampler {
    private let stopped: Locked<Bool>
    private let thread: BenchThread<(peakKiB: Int, samples: Int)>

    init(pid: pid_t, every interval: Duration) {
        let stopped = Locked(false)
        self.stopped = stopped
        thread = BenchThread {
            var peak = 0, samples = 0
            while !stopped.withLock({ $0 }) {
                if let resident = ProcFS.residentKiB(of: pid) {
                    peak = max(peak, resident)
                    samples += 1
                }
                CurrentProcess.sleep(for: interval)
            }
            return (peak, samples)
        }
    }

    /// Stops sampling and returns the peak and how many samples it saw.
    func finish() -> (peakKiB: Int, samples: Int) {
        stopped.withLock { $0 = true }
        return thread.join()
    }
}
