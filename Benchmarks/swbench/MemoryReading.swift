import Glibc
import Varlink

/// A process's memory as SPEC §7 judges it: what it owns, `Pss_Anon` + `Pss_Shmem` (its heap,
/// stacks and shared anonymous memory), and beside it, not judged, its resident size, which
/// also counts the file pages it maps (its code, its libraries'), held by the page cache
/// whoever maps them.
struct MemoryReading {
    let ownedMiB: Double
    let residentMiB: Double

    /// Nil when /proc cannot tell either (the process is gone, or no `smaps_rollup`).
    init?(of pid: pid_t) {
        guard let owned = ProcFS.ownedKiB(of: pid), let resident = ProcFS.residentKiB(of: pid) else { return nil }
        ownedMiB = Double(owned) / 1024
        residentMiB = Double(resident) / 1024
    }

    /// What `reading` owns, as a figure: a reading that failed counts as infinitely much,
    /// so that it is never taken as met.
    static func owned(_ reading: MemoryReading?) -> Double { reading?.ownedMiB ?? .infinity }

    /// What `after` owns beyond `before`, as a figure (infinite when either failed).
    static func ownedGrowth(from before: MemoryReading?, to after: MemoryReading?) -> Double {
        guard let before, let after else { return .infinity }
        return after.ownedMiB - before.ownedMiB
    }

    /// `owned_<name>_mib` and `resident_<name>_mib` of `reading`, for a figure's details
    /// (`unreadable_<name>` when it failed).
    static func members(_ reading: MemoryReading?, _ name: String) -> [JSONMember] {
        guard let reading else { return [JSONMember(key: "unreadable_\(name)", value: .bool(true))] }
        return [
            JSONMember(key: "owned_\(name)_mib", value: JSONReport.number(reading.ownedMiB)),
            JSONMember(key: "resident_\(name)_mib", value: JSONReport.number(reading.residentMiB)),
        ]
    }
}
