import CLinux
import Glibc

/// Bytes from the kernel's random source (`getrandom`, blocking only until the pool is
/// first seeded at boot): ids that must not repeat across devices.
package enum RandomBytes {
    /// `count` random bytes.
    package static func bytes(_ count: Int) throws(Errno) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            // A short read is possible for large requests (or a signal): the rest is asked again.
            let read = try bytes.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) -> Int in
                    try Posix.call { clinux_getrandom(raw.baseAddress! + filled, UInt(count - filled)) }
                }
            }.get()
            filled += Int(read)
        }
        return bytes
    }

    /// A random 64-bit number.
    package static func uint64() throws(Errno) -> UInt64 {
        try bytes(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
}
