/// A `--since`/`--until` argument (SPEC §5): read at parse time, turned into an instant
/// against "now" later (`instant(now:)`), so parsing stays pure.
package enum When: Equatable, Sendable {
    case now
    /// Local 00:00, `daysAgo` days before today (0: today, 1: yesterday).
    case startOfDay(daysAgo: Int)
    /// The latest local 00:00 that was this weekday (0 Sunday … 6 Saturday); today's when
    /// today is that day.
    case weekday(Int)
    /// That long before now, exactly (`7d` is 7 × 24 hours, whatever the clocks did).
    case ago(milliseconds: Int64)
    /// A local wall-clock time.
    case local(year: Int, month: Int, day: Int, hour: Int, minute: Int)
    /// `HH:MM`: the latest instant not in the future at which local clocks read that time
    /// (today's, or yesterday's when today's is still to come; of two on the night the
    /// clocks go back, the later one past; none when the clocks skipped it today).
    case clock(hour: Int, minute: Int)

    package static let forms =
        "now, today, yesterday, a weekday (monday … sunday, or mon … sun), Nd, Nh or Nm ago (7d, 3h, 90m; N of at most 6 digits), HH:MM (the latest such time, today or yesterday), YYYY-MM-DD or YYYY-MM-DDTHH:MM (local time)"

    private static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    /// Reads `text`; nil when it is none of `forms`.
    package init?(_ text: String) {
        let word = text.lowercased()
        switch word {
        case "now": self = .now
        case "today": self = .startOfDay(daysAgo: 0)
        case "yesterday": self = .startOfDay(daysAgo: 1)
        default:
            if let day = Self.weekdays.firstIndex(where: { $0 == word || $0.prefix(3) == word }) {
                self = .weekday(day)
            } else if let ago = Self.ago(word) {
                self = .ago(milliseconds: ago)
            } else if let local = Self.local(text) {
                self = local
            } else if let clock = Self.clock(text) {
                self = clock
            } else {
                return nil
            }
        }
    }

    /// The instant this names, in milliseconds since the epoch, `now` being the current time;
    /// nil when out of range. Never before the epoch: history starts there.
    package func instant(now: Int64) -> Int64? {
        let instant: Int64?
        switch self {
        case .now:
            instant = now
        case .startOfDay(let daysAgo):
            instant = LocalTime.startOfDay(now, addingDays: -daysAgo)
        case .weekday(let weekday):
            guard let today = LocalTime.dateTime(now) else { return nil }
            instant = LocalTime.startOfDay(now, addingDays: -((today.weekday - weekday + 7) % 7))
        case .ago(let milliseconds):
            instant = max(0, now - milliseconds)
        case .local(let year, let month, let day, let hour, let minute):
            instant = LocalTime.instant(year: year, month: month, day: day, hour: hour, minute: minute)
        case .clock(let hour, let minute):
            // Today's, else yesterday's: the one before today's is a day earlier by the
            // calendar (23 or 25 hours across a change of the clocks, not 24). On the night
            // the clocks go back, the time can come twice: the later one not in the future.
            // One the clocks skipped today, once passed, is nil (`isSkippedToday`), not
            // yesterday's: a day back would be a surprise, and any choice a guess.
            guard !isSkippedToday(now: now) else { return nil }
            let today = LocalTime.instants(ofClock: hour, minute, onDayOf: now, addingDays: 0).filter { $0 <= now }
            instant = today.last ?? LocalTime.instants(ofClock: hour, minute, onDayOf: now, addingDays: -1).filter { $0 <= now }.last
        }
        return instant.map { max(0, $0) }
    }

    /// Whether this is an `HH:MM` the clocks skipped today (02:30 in Berlin on the last
    /// Sunday of March) and that is behind them: the time it would have been has passed, so
    /// neither today's nor yesterday's is the one meant (`instant(now:)` is nil).
    package func isSkippedToday(now: Int64) -> Bool {
        guard case .clock(let hour, let minute) = self, let clocks = LocalTime.dateTime(now) else { return false }
        return (hour, minute) < (clocks.hour, clocks.minute) && LocalTime.instants(ofClock: hour, minute, onDayOf: now, addingDays: 0).isEmpty
    }

    /// `Nd`, `Nh`, `Nm`: N is 1 to 6 digits, so the product cannot overflow.
    private static func ago(_ word: String) -> Int64? {
        guard let unit = word.last, word.count >= 2, word.count <= 7 else { return nil }
        let digits = word.dropLast()
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int64(digits) else { return nil }
        switch unit {
        case "d": return count * 86_400_000
        case "h": return count * 3_600_000
        case "m": return count * 60_000
        default: return nil
        }
    }

    /// `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM` (a space for the T too), a real date and time.
    private static func local(_ text: String) -> When? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10 || bytes.count == 16 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            year >= 1970, (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        guard bytes.count == 16 else { return .local(year: year, month: month, day: day, hour: 0, minute: 0) }
        guard bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: " "), bytes[13] == UInt8(ascii: ":"),
            let hour = number(11..<13), let minute = number(14..<16), hour < 24, minute < 60
        else { return nil }
        return .local(year: year, month: month, day: day, hour: hour, minute: minute)
    }

    /// `HH:MM` or `H:MM`, 00:00 to 23:59.
    private static func clock(_ text: String) -> When? {
        let parts = text.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
            parts.allSatisfy({ $0.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }),
            let hour = Int(String(decoding: parts[0], as: UTF8.self)), let minute = Int(String(decoding: parts[1], as: UTF8.self)),
            hour < 24, minute < 60
        else { return nil }
        return .clock(hour: hour, minute: minute)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
