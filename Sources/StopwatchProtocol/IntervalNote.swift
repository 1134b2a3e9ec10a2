/// The rule for notes (SPEC §3 "Notes"), checked by `isValid` and said by `rule`: both
/// here, so daemon and client cannot drift apart.
///
/// A note is 1 to 1,024 Unicode scalars with no control character (C0, DEL or C1): it is
/// printed on one line by `swctl log`, put in a hook's environment and in a CSV field.
/// Valid UTF-8 is the JSON parser's to refuse: a `String` holds nothing else.
package enum IntervalNote {
    package static let maximumLength = 1_024

    package static let rule = "1 to \(maximumLength) characters, no control characters (no newline)"

    package static func isValid(_ note: String) -> Bool {
        var count = 0
        for scalar in note.unicodeScalars {
            count += 1
            guard count <= maximumLength, !StopwatchName.isControl(scalar) else { return false }
        }
        return count > 0
    }
}

/// Interval ids (SPEC §3): 16 lowercase hex digits; a call may name one by a unique prefix
/// of 6 or more.
package enum IntervalID {
    package static let length = 16
    package static let minimumPrefixLength = 6

    /// A whole id: exactly 16 lowercase hex digits.
    package static func isValid(_ id: String) -> Bool {
        id.utf8.count == length && isHex(id)
    }

    /// What a call may name an interval by: 6 to 16 lowercase hex digits.
    package static func isValidPrefix(_ prefix: String) -> Bool {
        (minimumPrefixLength...length).contains(prefix.utf8.count) && isHex(prefix)
    }

    private static func isHex(_ text: String) -> Bool {
        text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}
