/// The rule for stopwatch names (SPEC §3), checked by `isValid`, and said to people by
/// `rule`: both here, so that they cannot drift apart.
///
/// A valid name is 1 to 64 Unicode scalars, none a control character (C0, DEL or C1) or
/// `/`, not `.` or `..`, with no Unicode white space at either end. Those limits keep a
/// name printable on one line, usable as one shell word once quoted, and encodable as one
/// file name (`StopwatchFileName`). Names are compared as given, scalar by scalar: see
/// `StopwatchKey`.
package enum StopwatchName {
    /// The name used when a call gives none.
    package static let defaultName = "default"
    /// In Unicode scalars, not bytes or characters: what a person counts is closest to
    /// scalars, and unlike characters their count does not change with Unicode versions.
    package static let maximumLength = 64

    /// The rule as a person reads it: what to write instead of a name that is not valid.
    package static let rule = "1 to \(maximumLength) characters, no control characters or '/', not '.' or '..', no space at either end"

    /// What is wrong with `name`, an invalid name, and what to write instead. Control
    /// characters in it are shown as `\u{…}` escapes: the message goes to a terminal or a log.
    package static func invalidNameMessage(_ name: String) -> String {
        "'\(printable(name))' is not a valid name: use \(rule)"
    }

    package static func isValid(_ name: String) -> Bool {
        asciiVerdict(name) ?? isValidByScalars(name)
    }

    /// The rule itself, for any name.
    package static func isValidByScalars(_ name: String) -> Bool {
        let scalars = name.unicodeScalars
        guard let first = scalars.first, let last = scalars.last, !first.properties.isWhitespace,
            !last.properties.isWhitespace, name != ".", name != ".."
        else { return false }
        var count = 0
        for scalar in scalars {
            count += 1
            guard count <= maximumLength, !isControl(scalar), scalar != "/" else { return false }
        }
        return true
    }

    /// The rule for a name of printable ASCII (nearly every name), byte by byte; nil for
    /// any other name, which `isValidByScalars` reads (Unicode's white space and C1
    /// controls are not ASCII). The daemon checks the name of every call, and looking up
    /// each scalar's Unicode properties is slow beside comparing bytes.
    package static func asciiVerdict(_ name: String) -> Bool? {
        let utf8 = name.utf8
        guard let first = utf8.first, let last = utf8.last else { return false }
        guard utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        // One byte a scalar: the byte count is the scalar count. Space is ASCII's only
        // white space that is not also a control character.
        return utf8.count <= maximumLength && first != 0x20 && last != 0x20 && !utf8.contains(UInt8(ascii: "/"))
            && name != "." && name != ".."
    }

    /// C0 controls, DEL and C1 controls: none prints, some move a terminal's cursor, and
    /// NUL ends a C string (a hook's environment).
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// `text` with each control character written as `\u{XX}`, so that printing it cannot
    /// move a terminal's cursor or split a log line.
    package static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var shown = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                shown.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                shown.append(scalar)
            }
        }
        return String(shown)
    }
}
