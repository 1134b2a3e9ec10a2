import Foundation

/// A process's resident memory, from /proc.
enum DaemonMemory {
    /// VmRSS of `pid`, in KiB.
    static func residentKiB(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }
}
