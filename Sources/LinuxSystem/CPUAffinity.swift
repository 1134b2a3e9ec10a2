import CLinux
import Glibc

/// The CPUs a thread may run on (`sched_setaffinity(2)`): a set of CPU numbers, as the
/// kernel's bit mask of 1,024 CPUs. swbench pins a client and a server to one CPU so that the
/// scheduler's choice of core does not decide a round trip's time.
package struct CPUAffinity: Equatable, Sendable {
    /// The kernel's mask: bit `n` of byte `n / 8` for CPU `n`.
    private var mask: [UInt8]
    private static let bytes = 128

    package init(cpus: some Sequence<Int>) {
        mask = [UInt8](repeating: 0, count: Self.bytes)
        for cpu in cpus where cpu >= 0 && cpu < Self.bytes * 8 { mask[cpu / 8] |= 1 << UInt8(cpu % 8) }
    }

    /// The CPUs in the set, in order.
    package var cpus: [Int] {
        (0..<Self.bytes * 8).filter { mask[$0 / 8] & (1 << UInt8($0 % 8)) != 0 }
    }

    /// Thread `tid`'s affinity (0: the calling thread).
    package static func of(thread tid: pid_t) throws(Errno) -> CPUAffinity {
        var affinity = CPUAffinity(cpus: [])
        // The kernel fills as many bytes as its own mask has (at most those given); the rest
        // stay clear.
        _ = try Posix.call {
            affinity.mask.withUnsafeMutableBytes { clinux_get_affinity(tid, UInt($0.count), $0.baseAddress) }
        }
        return affinity
    }

    /// Sets thread `tid`'s affinity (0: the calling thread). Threads it starts later inherit it.
    package func apply(toThread tid: pid_t) throws(Errno) {
        _ = try Posix.call {
            mask.withUnsafeBytes { clinux_set_affinity(tid, UInt($0.count), $0.baseAddress) }
        }
    }
}
