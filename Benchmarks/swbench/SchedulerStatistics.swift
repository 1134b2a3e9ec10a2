import Glibc
import LinuxSystem

/// How long a process's threads have run on a CPU, and waited on a run queue for one, from
/// /proc/PID/task/*/schedstat (nanoseconds; threads that have ended are not counted). The
/// wait shows how much of a wall-clock figure a busy machine added.
struct SchedulerStatistics {
    let onCPU: Duration
    let waiting: Duration

    init?(of pid: pid_t) {
        var onCPU: Int64 = 0, waiting: Int64 = 0, threads = 0
        for thread in ProcFS.threadIDs(of: pid) {
            guard let bytes = try? FileSystem.contents(of: "/proc/\(pid)/task/\(thread)/schedstat", limit: 4096) else { continue }
            let fields = String(decoding: bytes, as: UTF8.self).split { $0 == " " || $0 == "\n" }.compactMap { Int64($0) }
            guard fields.count >= 2 else { continue }
            onCPU = onCPU.addingReportingOverflow(fields[0]).partialValue
            waiting = waiting.addingReportingOverflow(fields[1]).partialValue
            threads += 1
        }
        guard threads > 0 else { return nil }
        self.onCPU = .nanoseconds(onCPU)
        self.waiting = .nanoseconds(waiting)
    }
}
