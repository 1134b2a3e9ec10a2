import Glibc

/// glibc's `memchr`: a byte found many at a time (vector instructions), where a Swift loop
/// over a buffer compares one byte per iteration. Reading the history looks for the newline
/// of every line: in a generic `firstIndex(of:)`, a byte at a time, that was most of the
/// daemon's work for `log --since today` (docs/PERFORMANCE.md, "History").
package enum ByteSearch {
    /// The index of the first `byte` in `buffer` at `start` or after, or nil.
    package static func firstIndex(of byte: UInt8, in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = buffer.baseAddress, start >= 0, start < buffer.count else { return nil }
        guard let found = memchr(base + start, CInt(byte), buffer.count - start) else { return nil }
        return UnsafeRawPointer(found) - base
    }
}
