/// The rule for stopwatch names: `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`.
package enum StopwatchName {
    /// The name used when a call gives none.
    package static let defaultName = "default"
    package static let maximumLength = 64

    package static func isValid(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, bytes.count <= maximumLength, isAlphanumeric(first) else { return false }
        return bytes.dropFirst().allSatisfy {
            isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
        }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
