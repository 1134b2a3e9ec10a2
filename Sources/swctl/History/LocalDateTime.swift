/// A wall-clock time in the local time zone, as `localtime_r` breaks an instant down.
package struct LocalDateTime: Equatable, Sendable {
    package var year: Int
    /// 1…12.
    package var month: Int
    /// 1…31.
    package var day: Int
    package var hour: Int
    package var minute: Int
    package var second: Int
    /// 0 Sunday … 6 Saturday.
    package var weekday: Int
    /// East of UTC, in seconds (`tm_gmtoff`): +3600 for CET, -12600 for Newfoundland.
    package var utcOffsetSeconds: Int

    package init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, weekday: Int, utcOffsetSeconds: Int) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.weekday = weekday
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    /// `2026-11-24`.
    package var dayText: String {
        "\(Self.padded(year, 4))-\(Self.padded(month, 2))-\(Self.padded(day, 2))"
    }

    /// `2026-11-24 09:15:00`, for people.
    package var text: String {
        "\(dayText) \(Self.padded(hour, 2)):\(Self.padded(minute, 2)):\(Self.padded(second, 2))"
    }

    /// ISO 8601 with the offset, `2026-11-24T09:15:00+01:00`, which spreadsheets read. An
    /// offset's odd seconds (old local mean times) are dropped: ISO 8601 has no place for them.
    package var iso8601: String {
        let sign = utcOffsetSeconds < 0 ? "-" : "+"
        let offset = utcOffsetSeconds.magnitude / 60
        let time = "\(Self.padded(hour, 2)):\(Self.padded(minute, 2)):\(Self.padded(second, 2))"
        return "\(dayText)T\(time)\(sign)\(Self.padded(Int(offset / 60), 2)):\(Self.padded(Int(offset % 60), 2))"
    }

    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value.magnitude)
        let zeros = String(repeating: "0", count: max(0, width - digits.count))
        return (value < 0 ? "-" : "") + zeros + digits
    }
}
