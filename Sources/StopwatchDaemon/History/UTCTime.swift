/// Wall-clock instants as the daemon writes them in refusals and logs: `2026-11-26 17:30:00
/// UTC`. The daemon knows no time zone (a system service's is not its user's); swctl shows
/// local times.
enum UTCTime {
    /// `milliseconds` since the epoch as `YYYY-MM-DD HH:MM:SS UTC`; negative ones too, down to
    /// `Int64.min` (floor divisions that never overflow: any value given in a call is named).
    static func text(_ milliseconds: Int64) -> String {
        let seconds = milliseconds / 1000 - (milliseconds % 1000 < 0 ? 1 : 0)
        let days = seconds / 86_400 - (seconds % 86_400 < 0 ? 1 : 0)
        let secondOfDay = seconds - days * 86_400
        // Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):\(two(secondOfDay % 60)) UTC"
    }
}
