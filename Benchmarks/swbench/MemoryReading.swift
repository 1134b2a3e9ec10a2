import Glibc

/// A process's memory as SPEC §7 judges it: what it owns, `Pss_Anon` + `Pss_Shmem` (its heap,
/// stacks and shared anonymous memory), and beside it, not judged, its resident size, which
/// also counts the file pages it maps (its code, its libraries'), held by the page cache
/// whoever maps them. Zero where /proc cannot be read (the process is gone).
struct MemoryReading {
    var ownedMiB: Double
    var residentMiB: Double

    init(of pid: pid_t) {
        ownedMiB = ProcFS.ownedKiB(of: pid).map { Double($0) / 1024 } ?? 0
        residentMiB = ProcFS.residentKiB(of: pid).map { Double($0) / 1024 } ?? 0
    }
}
