/// A month of the history, in UTC: the file `YYYY-MM.jsonl` that holds the intervals that
/// ended in it.
package struct HistoryMonth: Hashable, Comparable, Sendable, CustomStringConvertible {
    package let year: Int
    /// 1 to 12.
    package let month: Int

    private static let millisecondsPerDay: Int64 = 86_400_000
    static let fileSuffix = ".jsonl"

    init?(year: Int, month: Int) {
        guard (1970...9999).contains(year), (1...12).contains(month) else { return nil }
        self.year = year
        self.month = month
    }

    /// The month holding `milliseconds` since the epoch (clamped to 1970–9999, which the
    /// history's range checks keep every interval within).
    package init(epochMilliseconds milliseconds: Int64) {
        let days = max(milliseconds, 0) / Self.millisecondsPerDay
        // Howard Hinnant's civil_from_days, for days since 1970-01-01 (non-negative here).
        let z = days + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        self.year = Int(min(year, 9999))
        self.month = Int(month)
    }

    /// `YYYY-MM.jsonl`, and nothing else (a temporary file, an editor's backup), is a month.
    package init?(fileName: String) {
        let bytes = Array(fileName.utf8)
        guard bytes.count == 13, fileName.hasSuffix(Self.fileSuffix), bytes[4] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7) else { return nil }
        self.init(year: year, month: month)
    }

    /// Written as its 13 bytes (a small string: no allocation): every `History` call names
    /// each month of each device a few times, and the interpolation it was cost about 600
    /// instructions a name.
    package var fileName: String {
        let (year, month) = (self.year, self.month)
        return String(unsafeUninitializedCapacity: 13) { bytes in
            func digit(_ value: Int) -> UInt8 { UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10) }
            bytes[0] = digit(year / 1000)
            bytes[1] = digit(year / 100)
            bytes[2] = digit(year / 10)
            bytes[3] = digit(year)
            bytes[4] = UInt8(ascii: "-")
            bytes[5] = digit(month / 10)
            bytes[6] = digit(month)
            for (offset, byte) in Self.fileSuffix.utf8.enumerated() { bytes[7 + offset] = byte }
            return 13
        }
    }

    package var description: String { fileName }

    /// Its first instant, in milliseconds since the epoch.
    package var startMilliseconds: Int64 {
        Self.daysFromCivil(year: Int64(year), month: Int64(month)) * Self.millisecondsPerDay
    }

    /// The first instant of the month after it.
    package var endMilliseconds: Int64 {
        month == 12
            ? Self.daysFromCivil(year: Int64(year) + 1, month: 1) * Self.millisecondsPerDay
            : Self.daysFromCivil(year: Int64(year), month: Int64(month) + 1) * Self.millisecondsPerDay
    }

    /// Days from 1970-01-01 to the first of `month` (Hinnant's days_from_civil).
    private static func daysFromCivil(year: Int64, month: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    package static func < (a: HistoryMonth, b: HistoryMonth) -> Bool {
        (a.year, a.month) < (b.year, b.month)
    }
}
