import StopwatchProtocol

/// An INTERVAL argument (SPEC §5): an id, a unique prefix of 6 or more of its hex digits, or
/// `@N`, the Nth latest ended interval of all (`@1` the latest). Read at parse time; `@N`
/// becomes an id later (`LatestIntervalSearch`), against the history then.
package enum IntervalReference: Equatable, Sendable {
    /// An id or a prefix of one, in lowercase, as the daemon takes it.
    case id(String)
    /// `@N`: N ≥ 1.
    case latest(Int)

    package static let forms = "an interval id (6 to 16 hex digits, as 'swctl log' shows it) or @N (the Nth latest ended interval, @1 the latest)"

    /// Reads `text`; a usage error that says what is wrong otherwise.
    package init(_ text: String) throws(UsageError) {
        if text.hasPrefix("@") {
            let digits = text.dropFirst()
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                throw UsageError("'\(StopwatchName.printable(text))' is not an interval: @N takes a whole number from 1 (@1 is the latest ended interval)")
            }
            guard let count = Int(digits) else {
                throw UsageError("'\(text)' is beyond any history: @N counts back from the latest ended interval (@1)")
            }
            guard count >= 1 else {
                throw UsageError("@0 names no interval: @1 is the latest ended interval, @2 the one before")
            }
            self = .latest(count)
            return
        }
        let id = text.lowercased()
        guard IntervalID.isValidPrefix(id) else {
            throw UsageError("'\(StopwatchName.printable(text))' is not \(Self.forms)")
        }
        self = .id(id)
    }
}
