import Glibc

/// The local time zone (`TZ`, else /etc/localtime), through Glibc's `localtime_r` and
/// `mktime`: what swctl needs of a calendar, without Foundation's start-up cost. `mktime`
/// with `tm_isdst = -1` finds the offset of the day asked for, so a day is 23 or 25 hours
/// long when the clocks change.
package enum LocalTime {
    /// Re-reads `TZ`: `localtime_r`, unlike `localtime`, need not do it itself.
    package static func reloadZone() {
        tzset()
    }

    /// The instant `milliseconds` since the epoch, broken down in local time; nil when
    /// Glibc cannot represent it.
    package static func dateTime(_ milliseconds: Int64) -> LocalDateTime? {
        var seconds = time_t(milliseconds.dividingFloor(by: 1000))
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return nil }
        return LocalDateTime(
            year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
            hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec),
            weekday: Int(parts.tm_wday), utcOffsetSeconds: parts.tm_gmtoff
        )
    }

    /// The instant of a local wall-clock time, in milliseconds since the epoch. Days and
    /// months out of range carry over (day 0 is the last of the month before), as `mktime`
    /// does. A time the clocks skip (02:30 on a spring-forward day) comes out an hour off,
    /// on whichever side Glibc picks. Nil when out of `time_t`'s or Glibc's range.
    package static func instant(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0) -> Int64? {
        guard let tmYear = Int32(exactly: year - 1900), let tmMonth = Int32(exactly: month - 1),
            let tmDay = Int32(exactly: day), let tmHour = Int32(exactly: hour), let tmMinute = Int32(exactly: minute)
        else { return nil }
        var parts = tm()
        parts.tm_year = tmYear
        parts.tm_mon = tmMonth
        parts.tm_mday = tmDay
        parts.tm_hour = tmHour
        parts.tm_min = tmMinute
        parts.tm_isdst = -1
        let seconds = mktime(&parts)
        // -1 is also 1969-12-31T23:59:59Z, before any history: an error either way.
        guard seconds != -1 else { return nil }
        let (milliseconds, overflow) = Int64(seconds).multipliedReportingOverflow(by: 1000)
        return overflow ? nil : milliseconds
    }

    /// Every instant at which local clocks read `hour`:`minute` on the date `days` days after
    /// that of `milliseconds` (negative: before), earliest first: one on most days, two when
    /// the clocks go back across it (01:30 EDT and 01:30 EST), none when they skip it. Each
    /// offset is tried (`tm_isdst` 0 and 1), and kept only if the clocks read that date and
    /// time back, as `mktime` alone moves a skipped time and picks one of a repeated one.
    package static func instants(ofClock hour: Int, _ minute: Int, onDayOf milliseconds: Int64, addingDays days: Int) -> [Int64] {
        // The date itself, at noon, which no change of the clocks skips.
        guard let today = dateTime(milliseconds), let noon = instant(year: today.year, month: today.month, day: today.day + days, hour: 12),
            let date = dateTime(noon),
            let tmYear = Int32(exactly: date.year - 1900), let tmHour = Int32(exactly: hour), let tmMinute = Int32(exactly: minute)
        else { return [] }
        var found: [Int64] = []
        for isDaylightSaving: Int32 in [0, 1] {
            var parts = tm()
            parts.tm_year = tmYear
            parts.tm_mon = Int32(date.month - 1)
            parts.tm_mday = Int32(date.day)
            parts.tm_hour = tmHour
            parts.tm_min = tmMinute
            parts.tm_isdst = isDaylightSaving
            let seconds = mktime(&parts)
            guard seconds != -1, case let (instant, false) = Int64(seconds).multipliedReportingOverflow(by: 1000),
                let read = dateTime(instant),
                read.year == date.year, read.month == date.month, read.day == date.day, read.hour == hour, read.minute == minute,
                !found.contains(instant)
            else { continue }
            found.append(instant)
        }
        return found.sorted()
    }

    /// Local 00:00 of the day `milliseconds` falls on, `days` days later (negative: earlier).
    package static func startOfDay(_ milliseconds: Int64, addingDays days: Int = 0) -> Int64? {
        guard let local = dateTime(milliseconds) else { return nil }
        let (day, overflow) = local.day.addingReportingOverflow(days)
        return overflow ? nil : instant(year: local.year, month: local.month, day: day)
    }
}

extension Int64 {
    /// Division rounding toward minus infinity: an instant before the epoch still falls in
    /// the second (or day) that contains it. `divisor` is positive.
    fileprivate func dividingFloor(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return self % divisor < 0 ? quotient - 1 : quotient
    }
}
