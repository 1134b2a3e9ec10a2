/// The rule for stopwatch names: `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`, checked by
/// `isValid`, and said to people by `rule`: both here, so that they cannot drift apart.
package enum StopwatchName {
    /// The name used when a call gives none.
    package static let defaultName = "default"
    package static let maximumLength = 64

    /// The rule as a person reads it: what to write instead of a name that is not valid.
    package static let rule = "up to \(maximumLength) letters, digits, '.', '_' or '-', starting with a letter or digit"

    /// What is wrong with `name`, an invalid name, and what to write instead.
    package static func invalidNameMessage(_ name: String) -> String {
        "'\(name)' is not a valid name: use \(rule)"
    }

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
