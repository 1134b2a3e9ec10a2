import Glibc
import StopwatchProtocol
import Testing
@testable import swctl

/// Everything that depends on the local time zone. `TZ` is process-wide, so these run one
/// at a time, each under a POSIX TZ string (no tzdata needed) restored afterwards; and CI
/// runs them apart from the other suites (`.ci/run`'s `alone`), one of which, rendering
/// local time meanwhile, would see the zone change under it.
@Suite("swctl log and report: local time", .serialized)
struct LocalTimeTests {
    /// Europe/Berlin's rule: CET, CEST from the last Sunday of March 02:00 to the last
    /// Sunday of October 03:00.
    static let berlin = "CET-1CEST,M3.5.0,M10.5.0/3"

    func inZone<T>(_ zone: String, _ body: () throws -> T) rethrows -> T {
        let saved = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", zone, 1)
        tzset()
        defer {
            if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
            tzset()
        }
        return try body()
    }

    // Thursday 2026-11-26 10:00 CET.
    static let thursday: Int64 = 1_795_683_600_000
    static let hour: Int64 = 3_600_000

    @Test func whenInstants() {
        inZone(Self.berlin) {
            let now = Self.thursday
            #expect(When.now.instant(now: now) == now)
            #expect(When("today")?.instant(now: now) == 1_795_647_600_000)
            #expect(When("yesterday")?.instant(now: now) == 1_795_561_200_000)
            #expect(When("monday")?.instant(now: now) == 1_795_388_400_000)
            #expect(When("thursday")?.instant(now: now) == 1_795_647_600_000)  // today
            #expect(When("friday")?.instant(now: now) == 1_795_647_600_000 - 6 * 24 * Self.hour)
            #expect(When("3h")?.instant(now: now) == now - 3 * Self.hour)
            #expect(When("2d")?.instant(now: now) == now - 48 * Self.hour)
            #expect(When("2026-11-24T09:15")?.instant(now: now) == 1_795_508_100_000)
            #expect(When("2026-11-26")?.instant(now: now) == 1_795_647_600_000)
            #expect(When("30000d")?.instant(now: now) == 0)
        }
    }

    @Test func whenAcrossDaylightSaving() {
        inZone(Self.berlin) {
            // Monday 2026-03-30 12:00 CEST; Sunday the 29th had 23 hours.
            let now: Int64 = 1_774_864_800_000
            #expect(When("today")?.instant(now: now) == 1_774_821_600_000)
            #expect(When("yesterday")?.instant(now: now) == 1_774_738_800_000)
            #expect(When("sunday")?.instant(now: now) == 1_774_738_800_000)
            #expect(LocalTime.startOfDay(1_774_738_800_000, addingDays: 1) == 1_774_738_800_000 + 23 * Self.hour)
            #expect(LocalTime.startOfDay(1_792_879_200_000, addingDays: 1) == 1_792_879_200_000 + 25 * Self.hour)
        }
    }

    @Test func iso8601Offsets() {
        inZone(Self.berlin) {
            #expect(LogText.iso8601(1_795_508_100_000) == "2026-11-24T09:15:00+01:00")
            #expect(LogText.iso8601(1_782_900_000_000) == "2026-07-01T12:00:00+02:00")
        }
        inZone("IST-5:30") {
            #expect(LogText.iso8601(1_782_900_000_000) == "2026-07-01T15:30:00+05:30")
        }
        inZone("NST3:30") {
            #expect(LogText.iso8601(1_782_900_000_000) == "2026-07-01T06:30:00-03:30")
        }
        inZone("UTC0") {
            #expect(LogText.iso8601(0) == "1970-01-01T00:00:00+00:00")
        }
    }

    @Test func logRows() {
        inZone(Self.berlin) {
            let closed = Interval(
                id: "0123456789abcdef", name: "a \"b\", c", startMs: 1_795_508_100_000, endMs: 1_795_511_700_000, elapsedMs: 3_600_000
            )
            let open = Interval(id: "fedcba9876543210", name: "タイマー", startMs: 1_795_508_100_000, endMs: nil, elapsedMs: 61_000, note: "=why, \"so\"")
            #expect(LogText.csv(closed) == "\"a \"\"b\"\", c\",2026-11-24T09:15:00+01:00,2026-11-24T10:15:00+01:00,3600000,0123456789abcdef,")
            #expect(LogText.csv(open) == "タイマー,2026-11-24T09:15:00+01:00,,61000,fedcba9876543210,\"'=why, \"\"so\"\"\"")
            let layout = LogText.Layout(numberWidth: 3, nameWidth: 8)
            #expect(LogText.header(layout) == "  #  ID        NAME      START                END                    ELAPSED")
            #expect(LogText.row(open, number: nil, layout: layout) == "     fedcba98  タイマー  2026-11-24 09:15:00  counting               0:01:01")
            #expect(LogText.row(closed, number: 12, layout: layout) == "@12  01234567  a \"b\", c  2026-11-24 09:15:00  2026-11-24 10:15:00    1:00:00")
            let wide = LogText.Layout(numberWidth: 2, nameWidth: 8, deviceWidth: 6, notes: true)
            #expect(LogText.header(wide) == " #  ID        NAME      START                END                    ELAPSED  DEVICE  NOTE")
            var noted = closed
            noted.note = "fix\u{1B}[2J"
            noted.device = "desk"
            #expect(LogText.row(noted, number: 1, layout: wide) == "@1  01234567  a \"b\", c  2026-11-24 09:15:00  2026-11-24 10:15:00    1:00:00  desk    fix\\u{1B}[2J")
            #expect(LogText.line(noted) == "01234567 a \"b\", c 2026-11-24 09:15:00 to 2026-11-24 10:15:00 (1:00:00) \"fix\\u{1B}[2J\"")
            #expect(LogText.line(Interval(name: "x", startMs: 0, endMs: 1_000, elapsedMs: 1_000)).hasPrefix("- x "))
        }
    }

    @Test("HH:MM is the latest such local time not in the future: today's, else yesterday's")
    func clockTimes() {
        inZone(Self.berlin) {
            let now = Self.thursday  // 2026-11-26 10:00 CET
            #expect(When("09:30") == .clock(hour: 9, minute: 30))
            #expect(When("9:30") == .clock(hour: 9, minute: 30))
            #expect(When("09:30")?.instant(now: now) == now - 30 * 60_000)
            #expect(When("10:00")?.instant(now: now) == now)
            #expect(When("10:01")?.instant(now: now) == now - 24 * Self.hour + 60_000)
            #expect(When("00:00")?.instant(now: now) == When("today")?.instant(now: now))
            #expect(When("23:59")?.instant(now: now) == now - 10 * Self.hour - 60_000)
            // Just after midnight, 23:50 is yesterday's, ten minutes ago; 00:05 is not yet.
            let midnight: Int64 = 1_795_647_600_000
            #expect(When("23:50")?.instant(now: midnight + 5 * 60_000) == midnight - 10 * 60_000)
            #expect(When("00:05")?.instant(now: midnight + 4 * 60_000) == midnight + 5 * 60_000 - 24 * Self.hour)
            #expect(When("00:05")?.instant(now: midnight + 5 * 60_000) == midnight + 5 * 60_000)
            // The first of the month: yesterday is the last day of the one before.
            let december: Int64 = 1_796_079_600_000  // 2026-12-01 00:00 CET
            #expect(When("18:00")?.instant(now: december + Self.hour) == december - 6 * Self.hour)
        }
    }

    @Test("HH:MM across the clocks' change: yesterday's is by the calendar, 23 or 25 hours back")
    func clockTimesAcrossDaylightSaving() {
        inZone(Self.berlin) {
            // Monday 2026-03-30 01:00 CEST; Sunday the 29th had 23 hours (02:00 CET → 03:00 CEST).
            let mondayOne: Int64 = 1_774_825_200_000
            #expect(When("01:30")?.instant(now: mondayOne) == mondayOne + 30 * 60_000 - 23 * Self.hour)
            #expect(When("00:30")?.instant(now: mondayOne) == mondayOne - 30 * 60_000)
        }
    }

    /// New York's rule: EST, EDT from the second Sunday of March 02:00 to the first Sunday
    /// of November 02:00.
    static let newYork = "EST5EDT,M3.2.0,M11.1.0"
    static let minute: Int64 = 60_000

    @Test("HH:MM on the night the clocks go back: of the two, the later one not in the future")
    func clockTimesRepeated() {
        inZone(Self.berlin) {
            // Sunday 2026-10-25 02:45 CEST (00:45Z); 02:30 comes again at 01:30Z, still ahead.
            let firstPass: Int64 = 1_792_889_100_000
            #expect(When("02:30")?.instant(now: firstPass) == firstPass - 15 * Self.minute)
            // 02:15 CET (01:15Z), the second pass: 02:30 CET is ahead, 02:30 CEST was 45 min ago.
            let secondPass = firstPass + 30 * Self.minute
            #expect(When("02:30")?.instant(now: secondPass) == secondPass - 45 * Self.minute)
            #expect(When("02:10")?.instant(now: secondPass) == secondPass - 5 * Self.minute)
            #expect(When("02:30")?.isSkippedToday(now: secondPass) == false)
        }
        inZone(Self.newYork) {
            // Sunday 2026-11-01 01:45 EST (06:45Z): 01:30 EST, 15 min ago, not 01:30 EDT.
            let now: Int64 = 1_793_515_500_000
            #expect(When("01:30")?.instant(now: now) == now - 15 * Self.minute)
            #expect(When("00:30")?.instant(now: now) == now - 135 * Self.minute)
        }
    }

    @Test("HH:MM the clocks skipped today: nil once passed (a usage error), yesterday's before the skip")
    func clockTimesSkipped() {
        inZone(Self.berlin) {
            // Sunday 2026-03-29 03:10 CEST (01:10Z): 02:30 did not happen today.
            let afterSkip: Int64 = 1_774_746_600_000
            #expect(When("02:30")?.instant(now: afterSkip) == nil)
            #expect(When("02:30")?.isSkippedToday(now: afterSkip) == true)
            #expect(When("03:05")?.instant(now: afterSkip) == afterSkip - 5 * Self.minute)
            #expect(When("01:55")?.instant(now: afterSkip) == afterSkip - 15 * Self.minute)
            // 01:30 CET (00:30Z), before the skip: today's 02:30 is still to come, so
            // yesterday's (2026-03-28 02:30 CET, 01:30Z) is the latest.
            let beforeSkip: Int64 = 1_774_744_200_000
            #expect(When("02:30")?.isSkippedToday(now: beforeSkip) == false)
            #expect(When("02:30")?.instant(now: beforeSkip) == 1_774_661_400_000)
            #expect(LocalTime.instants(ofClock: 2, 30, onDayOf: afterSkip, addingDays: 0).isEmpty)
            #expect(LocalTime.instants(ofClock: 2, 30, onDayOf: 1_792_889_100_000, addingDays: 0).count == 2)
        }
    }

    @Test func splitAtMidnightAcrossSpringForward() {
        inZone(Self.berlin) {
            var aggregator = ReportAggregator(since: nil, until: nil, now: 0, byDay: true)
            // Saturday 22:00 CET to Sunday 04:00 CEST: 5 hours, 2 on Saturday.
            aggregator.add(Interval(name: "x", startMs: 1_774_731_600_000, endMs: 1_774_749_600_000, elapsedMs: 5 * Self.hour))
            // All of Sunday the 29th: 23 hours.
            aggregator.add(Interval(name: "y", startMs: 1_774_738_800_000, endMs: 1_774_821_600_000, elapsedMs: 23 * Self.hour))
            let totals = aggregator.totals
            #expect(totals.days.map(\.day) == ["2026-03-28", "2026-03-29"])
            #expect(totals.days.map(\.total) == [2 * Self.hour, 26 * Self.hour])
            #expect(totals.days[1].names == [.init(name: "y", milliseconds: 23 * Self.hour), .init(name: "x", milliseconds: 3 * Self.hour)])
            #expect(totals.total == 28 * Self.hour)
        }
    }

    @Test func splitAcrossFallBackAndScaled() {
        inZone(Self.berlin) {
            var aggregator = ReportAggregator(since: nil, until: nil, now: 0, byDay: true)
            // Sunday 2026-10-25 had 25 hours; from its 00:00 to Monday 01:00, but a clock
            // step made the wall span twice the elapsed time: each day gets half its part.
            let start: Int64 = 1_792_879_200_000
            aggregator.add(Interval(name: "x", startMs: start, endMs: start + 26 * Self.hour, elapsedMs: 13 * Self.hour))
            let totals = aggregator.totals
            #expect(totals.days.map(\.day) == ["2026-10-25", "2026-10-26"])
            #expect(totals.days.map(\.total) == [12 * Self.hour + 30 * 60_000, 30 * 60_000])
            #expect(totals.total == 13 * Self.hour)
        }
    }

    @Test func clippedToTheRangeAndOpenToNow() {
        inZone(Self.berlin) {
            // From Monday 2026-11-23 00:00; an interval Sunday 23:00 to Monday 01:00 counts 1 h.
            let monday: Int64 = 1_795_388_400_000
            let now = monday + 10 * Self.hour
            var aggregator = ReportAggregator(since: monday, until: nil, now: now, byDay: true)
            aggregator.add(Interval(name: "late", startMs: monday - Self.hour, endMs: monday + Self.hour, elapsedMs: 2 * Self.hour))
            aggregator.add(Interval(name: "open", startMs: now - 2 * Self.hour, endMs: nil, elapsedMs: 2 * Self.hour))
            let totals = aggregator.totals
            #expect(totals.days.map(\.day) == ["2026-11-23"])
            #expect(totals.names == [.init(name: "open", milliseconds: 2 * Self.hour), .init(name: "late", milliseconds: Self.hour)])
            #expect(totals.total == 3 * Self.hour)
        }
    }

    @Test("by day: a three-day interval split at each midnight; a damaged line of 1970 to 9999 clipped to three days by --since and --until, split the same, in proportion")
    func splitOverTheRangeAsked() {
        inZone(Self.berlin) {
            let day = 24 * Self.hour
            // Monday 2026-11-23 00:00 CET.
            let monday: Int64 = 1_795_388_400_000
            var plain = ReportAggregator(since: nil, until: nil, now: monday + 10 * day, byDay: true)
            plain.add(Interval(name: "x", startMs: monday + 12 * Self.hour, endMs: monday + 12 * Self.hour + 3 * day, elapsedMs: 3 * day))
            let totals = plain.totals
            #expect(totals.days.map(\.day) == ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26"])
            #expect(totals.days.map(\.total) == [12 * Self.hour, day, day, 12 * Self.hour])
            #expect(totals.total == 3 * day)
            // Its elapsed time is its span: a millisecond counted per millisecond of it.
            var clipped = ReportAggregator(since: monday, until: monday + 3 * day, now: monday + 10 * day, byDay: true)
            clipped.add(Interval(name: "odd", startMs: 0, endMs: Interval.latestMs, elapsedMs: Interval.latestMs))
            #expect(clipped.totals.days.map(\.day) == ["2026-11-23", "2026-11-24", "2026-11-25"])
            #expect(clipped.totals.days.map(\.total) == [day, day, day])
            #expect(clipped.totals.total == 3 * day)
        }
    }

    @Test("by day: a part of an interval longer than 366 days is one row of its span, not millions of days; quick, and the totals hold")
    func longSpanIsOneRow() {
        inZone("UTC0") {
            let day = 24 * Self.hour
            let hundredYears = 100 * 366 * day
            let tuesday: Int64 = 1_795_478_400_000  // 2026-11-24 00:00 UTC
            let started = ContinuousClock.now
            var aggregator = ReportAggregator(since: nil, until: nil, now: tuesday + day, byDay: true)
            // A damaged line: 1970 to the end of 9999, with the most time a line may hold.
            aggregator.add(Interval(name: "odd", startMs: 0, endMs: Interval.latestMs, elapsedMs: hundredYears))
            aggregator.add(Interval(name: "tea", startMs: tuesday + Self.hour, endMs: tuesday + 2 * Self.hour, elapsedMs: Self.hour))
            // Another long one inside it: the same row, which spans both.
            aggregator.add(Interval(name: "odd", startMs: day, endMs: 800 * day, elapsedMs: Self.hour))
            let totals = aggregator.totals
            #expect(ContinuousClock.now - started < .seconds(10))
            #expect(totals.days.map(\.day) == ["1970-01-01/9999-12-31", "2026-11-24"])
            #expect(totals.days.map(\.spansDays) == [true, false])
            #expect(totals.days.first?.names == [.init(name: "odd", milliseconds: hundredYears + Self.hour)])
            #expect(totals.days.last?.names == [.init(name: "tea", milliseconds: Self.hour)])
            #expect(totals.names == [.init(name: "odd", milliseconds: hundredYears + Self.hour), .init(name: "tea", milliseconds: Self.hour)])
            #expect(totals.total == hundredYears + 2 * Self.hour)
            // From --since on: the part after it is still longer than 366 days, its own row.
            var since = ReportAggregator(since: tuesday, until: nil, now: tuesday + day, byDay: true)
            since.add(Interval(name: "odd", startMs: 0, endMs: Interval.latestMs, elapsedMs: Interval.latestMs))
            #expect(since.totals.days.map(\.day) == ["2026-11-24/9999-12-31"])
            #expect(since.totals.total == Interval.latestMs - tuesday)
        }
    }

    @Test("by day: a thousand lines spanning 366 days with a millisecond each step through a day or two each, not 367, and count every millisecond")
    func daysWithNothingSkipped() {
        inZone(Self.berlin) {
            let day = 24 * Self.hour
            var aggregator = ReportAggregator(since: nil, until: nil, now: Interval.latestMs, byDay: true)
            for index in Int64(0)..<1_000 {
                // Ends at 00:00 UTC: the one millisecond is counted at the last instant.
                let start = 1_700_006_400_000 + index * day
                aggregator.add(Interval(name: "odd", startMs: start, endMs: start + 366 * day, elapsedMs: 1))
            }
            // Walked one by one: 367,000 days, each a mktime or two.
            #expect(aggregator.daysWalked <= 2 * 1_000, "\(aggregator.daysWalked) days walked")
            let totals = aggregator.totals
            #expect(totals.total == 1_000)
            #expect(totals.days.map(\.total).reduce(0, +) == 1_000)
            // Each ends at 01:00 local: its millisecond on a day of its own.
            #expect(totals.days.count == 1_000)
        }
        inZone("UTC0") {
            // An end exactly at local midnight: the millisecond is the day before's, not lost.
            let day = 24 * Self.hour
            var aggregator = ReportAggregator(since: nil, until: nil, now: Interval.latestMs, byDay: true)
            aggregator.add(Interval(name: "odd", startMs: 1_700_006_400_000, endMs: 1_700_006_400_000 + 366 * day, elapsedMs: 1))
            #expect(aggregator.totals.days.map(\.total) == [1])
            #expect(aggregator.daysWalked <= 2)
        }
    }
}
