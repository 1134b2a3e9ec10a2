/// A stopwatch name as a dictionary key or a sort key, compared and hashed by its UTF-8
/// bytes: the daemon keeps its stopwatches by it, and `swctl report` its totals.
///
/// SPEC §3 compares names as given. Swift's `String` compares and hashes by canonical
/// equivalence, which would make "café" (U+00E9) and "cafe\u{301}" one stopwatch, in one
/// entry but two files. Ordered by bytes too, which is code point order: `List`'s order.
package struct StopwatchKey: Hashable, Comparable, Sendable {
    package let name: String

    package init(_ name: String) { self.name = name }

    package static func == (left: StopwatchKey, right: StopwatchKey) -> Bool {
        // Over the strings' own bytes where they are in one piece (a native string's are):
        // `elementsEqual` on the UTF-8 views steps an iterator per byte, and every call of
        // the daemon and every interval of a `report` compares a name.
        let compared: Bool? = left.name.utf8.withContiguousStorageIfAvailable { leftBytes in
            right.name.utf8.withContiguousStorageIfAvailable { rightBytes in Self.equal(leftBytes, rightBytes) }
        } ?? nil
        return compared ?? left.name.utf8.elementsEqual(right.name.utf8)
    }

    private static func equal(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        guard left.count == right.count else { return false }
        for index in 0..<left.count where left[index] != right[index] { return false }
        return true
    }

    package static func < (left: StopwatchKey, right: StopwatchKey) -> Bool {
        // Over the bytes in one piece, as `==`: `List` sorts every stopwatch by it.
        let compared: Bool? = left.name.utf8.withContiguousStorageIfAvailable { leftBytes in
            right.name.utf8.withContiguousStorageIfAvailable { rightBytes in Self.precedes(leftBytes, rightBytes) }
        } ?? nil
        return compared ?? left.name.utf8.lexicographicallyPrecedes(right.name.utf8)
    }

    private static func precedes(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        let common = min(left.count, right.count)
        for index in 0..<common where left[index] != right[index] { return left[index] < right[index] }
        return left.count < right.count
    }

    package func hash(into hasher: inout Hasher) {
        let hashed: Void? = name.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if hashed == nil {
            for byte in name.utf8 { hasher.combine(byte) }
        }
    }
}
