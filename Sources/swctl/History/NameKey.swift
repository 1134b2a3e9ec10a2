/// A stopwatch name as a dictionary key that compares the UTF-8 bytes: names are compared
/// as given (SPEC §3), while `String`'s own equality treats "café" composed and decomposed
/// as one name.
package struct NameKey: Hashable, Sendable {
    package let name: String
    private let bytes: [UInt8]

    package init(_ name: String) {
        self.name = name
        self.bytes = Array(name.utf8)
    }

    package static func == (lhs: NameKey, rhs: NameKey) -> Bool { lhs.bytes == rhs.bytes }

    /// The bytes in one piece: `combine(bytes)` would feed them one by one (a `report` over a
    /// million intervals hashes a million names).
    package func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// Byte order, the order the daemon's `List` uses.
    package static func precedes(_ lhs: NameKey, _ rhs: NameKey) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}
