import LinuxSystem
import StopwatchProtocol

/// Interval ids in the journal (SPEC §3, docs/HISTORY.md): 16 lowercase hex digits.
///
/// A new interval gets 64 random bits (`getrandom`): unique across devices without asking
/// them. A line of the release before ids has none: its id is derived from its content
/// (FNV-1a 64 over `name NUL start NUL end NUL elapsed`, the numbers in decimal), so the same
/// line has the same id on every read, on every device, and is never rewritten.
package enum IntervalIdentity {
    /// A new random id.
    package static func random() -> String {
        // getrandom fails only without the syscall (a kernel before 3.17): the standard
        // library's generator (which reads /dev/urandom there) stands in.
        let value = (try? RandomBytes.uint64()) ?? UInt64.random(in: .min ... .max)
        return hex(value)
    }

    /// The id of an automatic cycle's phase that began where the phase `previous` expired,
    /// at `phase` (0-based) of `round`: derived (FNV-1a 64 over `previous NUL round NUL
    /// phase`), not random, so that a restart replaying phases whose ends were written before
    /// a crash makes the same ids again and finds them in the history (`StopwatchService`).
    /// From the position, not from a clock reading: after a reboot the boot clock's readings
    /// are another boot's, the positions the same.
    static func following(_ previous: String, phase: Int, round: Int) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in previous.utf8 + [0] + String(round).utf8 + [0] + String(phase).utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hex(hash)
    }

    /// The id of a line written without one.
    static func derived(name: String, startMs: Int64, endMs: Int64, elapsedMs: Int64) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
        }
        add(name.utf8)
        add(CollectionOfOne(0))
        add(String(startMs).utf8)
        add(CollectionOfOne(0))
        add(String(endMs).utf8)
        add(CollectionOfOne(0))
        add(String(elapsedMs).utf8)
        return hex(hash)
    }

    /// 16 lowercase hex digits.
    package static func hex(_ value: UInt64) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<16 { bytes[15 - index] = digits[Int((value >> (UInt64(index) * 4)) & 0xF)] }
        return String(decoding: bytes, as: UTF8.self)
    }
}
