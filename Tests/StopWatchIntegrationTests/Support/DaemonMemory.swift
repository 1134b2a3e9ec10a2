import Foundation

/// A process's memory and CPU time, from /proc.
enum DaemonMemory {
    /// VmRSS of `pid`, in KiB.
    static func residentKiB(of pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return field("VmRSS:", in: text)
    }

    /// The memory `pid` owns, in KiB: Pss_Anon + Pss_Shmem from /proc/PID/smaps_rollup (its
    /// heap and stacks, not the pages of files it maps, which the page cache keeps anyway).
    static func ownedKiB(of pid: pid_t) -> Int? {
        // Read once: both fields of the same instant.
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8),
            let anonymous = field("Pss_Anon:", in: text)
        else { return nil }
        return anonymous + (field("Pss_Shmem:", in: text) ?? 0)
    }

    /// User and system CPU time of `pid` so far, in clock ticks.
    static func cpuTicks(of pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = text.lastIndex(of: ")") else { return nil }
        // After "pid (comm)": utime and stime are the 14th and 15th fields.
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    private static func field(_ name: String, in text: String) -> Int? {
        let line = text.split(separator: "\n").first { $0.hasPrefix(name) }
        return line?.dropFirst(name.count).split { $0 == " " || $0 == "\t" }.first.flatMap { Int($0) }
    }
}
