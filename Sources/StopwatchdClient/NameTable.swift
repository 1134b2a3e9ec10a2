import Glibc

/// The stopwatch names a `History` stream brought, each once, numbered in the order they
/// first came; found again by their bytes. Names are compared by their UTF-8 bytes (as
/// `StopwatchKey` compares them): "café" composed and decomposed are two names.
///
/// Open addressing over a flat store of the names' bytes, with FNV-1a: a reply of 10,000
/// intervals over a handful of names looks each up without making a string, and a new name
/// is checked valid UTF-8 once, when it first comes. Memory grows with the names, never
/// with the intervals.
package struct NameTable: Sendable {
    /// The names, by number.
    package private(set) var names: [String] = []
    /// Each name's bytes, one after the other, and where each is.
    private var storage: [UInt8] = []
    private var spans: [(offset: Int, count: Int)] = []
    /// Numbers of names, -1 for a free slot; a power of two, at most half full.
    private var slots = [Int32](repeating: -1, count: 16)

    package init() {}

    /// The number of the name whose UTF-8 bytes are `bytes`, added if new; nil when they are
    /// not valid UTF-8 (such a reply is left to the full JSON path, which says why).
    package mutating func number(of bytes: UnsafeRawBufferPointer) -> Int32? {
        let hash = Self.hash(bytes)
        var slot = Int(truncatingIfNeeded: hash) & (slots.count - 1)
        while true {
            let found = slots[slot]
            if found < 0 { break }
            if matches(Int(found), bytes) { return found }
            slot = (slot + 1) & (slots.count - 1)
        }
        guard let name = String(validating: bytes, as: UTF8.self) else { return nil }
        let number = Int32(names.count)
        names.append(name)
        spans.append((storage.count, bytes.count))
        storage.append(contentsOf: bytes)
        slots[slot] = number
        if names.count * 2 > slots.count { grow() }
        return number
    }

    /// The number of `name`, added if new.
    package mutating func number(of name: String) -> Int32 {
        var name = name
        // A String's own bytes are valid UTF-8: never nil.
        return name.withUTF8 { number(of: UnsafeRawBufferPointer($0)) } ?? 0
    }

    private func matches(_ number: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let span = spans[number]
        guard span.count == bytes.count else { return false }
        guard span.count > 0, let base = bytes.baseAddress else { return true }
        return storage.withUnsafeBytes { stored in memcmp(stored.baseAddress! + span.offset, base, span.count) == 0 }
    }

    private mutating func grow() {
        var larger = [Int32](repeating: -1, count: slots.count * 2)
        storage.withUnsafeBytes { stored in
            for (number, span) in spans.enumerated() {
                var slot = Int(truncatingIfNeeded: Self.hash(UnsafeRawBufferPointer(rebasing: stored[span.offset..<(span.offset + span.count)]))) & (larger.count - 1)
                while larger[slot] >= 0 { slot = (slot + 1) & (larger.count - 1) }
                larger[slot] = Int32(number)
            }
        }
        slots = larger
    }

    /// FNV-1a, 64 bits: names are short, and who sends them is the daemon.
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }
}
