import Glibc
import LinuxSystem

/// What /proc tells about another process: memory, CPU time, threads.
enum ProcFS {
    /// Clock ticks per second, the unit of CPU times in /proc/PID/stat.
    static let ticksPerSecond = Double(sysconf(CInt(_SC_CLK_TCK)))

    /// VmRSS of `pid`, in KiB.
    static func residentKiB(of pid: pid_t) -> Int? {
        field("VmRSS:", in: "/proc/\(pid)/status")
    }

    /// The memory `pid` owns, in KiB: `Pss_Anon` + `Pss_Shmem` from /proc/PID/smaps_rollup
    /// (SPEC §7: its heap and stacks; not the file pages it maps, which the page cache holds).
    static func ownedKiB(of pid: pid_t) -> Int? {
        let path = "/proc/\(pid)/smaps_rollup"
        guard let text = text(of: path), let anonymous = field("Pss_Anon:", inText: text) else { return nil }
        return anonymous + (field("Pss_Shmem:", inText: text) ?? 0)
    }

    /// The CPU time `pid` has used, user and system, all threads, in seconds.
    static func cpuSeconds(of pid: pid_t) -> Double? {
        guard let text = text(of: "/proc/\(pid)/stat"), let end = text.lastIndex(of: ")") else { return nil }
        // After "pid (comm)" come the fields from the third on; utime and stime are the
        // 14th and 15th. comm may hold spaces and parentheses: split after its last ')'.
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }

    /// The CPU time `pid` has used, all its threads (ended ones too), in seconds to the
    /// nanosecond: the scheduler's own sum (its CPU-time clock), where /proc/PID/stat gives
    /// clock ticks.
    static func preciseCPUSeconds(of pid: pid_t) -> Double? {
        var clock = clockid_t()
        var time = timespec()
        guard clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &time) == 0 else { return nil }
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The threads of `pid`.
    static func threadIDs(of pid: pid_t) -> [pid_t] {
        ((try? FileSystem.entries(of: "/proc/\(pid)/task")) ?? []).compactMap { pid_t($0) }
    }

    /// Voluntary plus involuntary context switches of one thread.
    static func contextSwitches(of thread: pid_t, in pid: pid_t) -> Int? {
        let path = "/proc/\(pid)/task/\(thread)/status"
        guard let text = text(of: path) else { return nil }
        guard let voluntary = field("voluntary_ctxt_switches:", inText: text),
            let involuntary = field("nonvoluntary_ctxt_switches:", inText: text)
        else { return nil }
        return voluntary + involuntary
    }

    private static func text(of path: String) -> String? {
        (try? FileSystem.contents(of: path, limit: 1 << 20)).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func field(_ name: String, in path: String) -> Int? {
        text(of: path).flatMap { field(name, inText: $0) }
    }

    /// The number after `name` on the line that starts with it.
    private static func field(_ name: String, inText text: String) -> Int? {
        let line = text.split(separator: "\n").first { $0.hasPrefix(name) }
        return line?.dropFirst(name.count).split { $0 == " " || $0 == "\t" }.first.flatMap { Int($0) }
    }
}
