import StopwatchProtocol
import StopwatchdClient
import Testing
@testable import swctl

/// `@N` and `log`'s numbers: `@N` found in a widening window, never the whole history for a
/// recent one, and `log` numbering every row as `@N` would resolve it, filters or not.
@Suite("@N and log's numbers")
struct IntervalNumberingTests {
    static let day: Int64 = 86_400_000
    static let now: Int64 = 1_795_683_600_000

    /// A history as the daemon streams it: `History(since:)` with no name and no until,
    /// in batches of `batch`, the ended ones in the order they ended, the counting one last.
    /// Readings are counted as they are closed; `grows` is appended from the second on (an
    /// interval ended meanwhile).
    final class FakeHistory {
        var intervals: [Interval]
        let batch: Int
        let grows: Interval?
        private(set) var asked: [Int64?] = []
        private(set) var closed = 0

        init(_ intervals: [Interval], batch: Int = 3, grows: Interval? = nil) {
            self.intervals = intervals
            self.batch = batch
            self.grows = grows
        }

        func open(_ since: Int64?) -> HistoryReading {
            asked.append(since)
            if asked.count == 2, let grows { intervals.append(grows) }
            let matching = intervals.filter { interval in
                guard let since else { return true }
                let end = interval.endMs ?? (interval.startMs + interval.elapsedMs)
                return end == interval.startMs ? interval.startMs >= since : end > since
            }
            var offset = 0
            var done = false
            let size = batch
            return HistoryReading(
                next: { () throws(ClientError) -> [Interval]? in
                    guard !done else { return nil }
                    let slice = Array(matching[offset..<min(offset + size, matching.count)])
                    offset += slice.count
                    if offset >= matching.count { done = true }
                    return slice
                },
                close: { self.closed += 1 }
            )
        }
    }

    /// An ended interval `hoursAgo` before now, an hour long.
    static func ended(_ id: String, _ name: String = "work", endingDaysAgo days: Int64, device: String = "desk") -> Interval {
        let end = now - days * day
        return Interval(id: id, name: name, startMs: end - 3_600_000, endMs: end, elapsedMs: 3_600_000, device: device)
    }

    /// Ten ended intervals, one ending every 10 days back from 1 hour ago (the latest first
    /// in ids: a0 latest), plus one still counting.
    static let history: [Interval] = (0..<10).reversed().map { i in
        var interval = ended("a\(i)00000000000000", i % 2 == 0 ? "work" : "tea", endingDaysAgo: Int64(i) * 10)
        interval.endMs! -= 3_600_000
        interval.startMs -= 3_600_000
        return interval
    } + [Interval(id: "", name: "work", startMs: now - 60_000, endMs: nil, elapsedMs: 60_000)]

    func search(_ count: Int, kept: Int = 10_000, in history: FakeHistory) throws -> LatestIntervalSearch.Outcome {
        try LatestIntervalSearch(count: count, kept: kept).run(now: Self.now) { since throws(ClientError) in history.open(since) }
    }

    @Test("@1 reads the last day only; the counting interval is not counted")
    func latestFromOneDay() throws {
        let history = FakeHistory(Self.history)
        #expect(try search(1, in: history) == .found(Self.history[9]))
        #expect(history.asked == [Self.now - Self.day])
    }

    @Test("the window widens 1, 7, 31, 366 days, then all, until it holds N ended intervals")
    func windowWidens() throws {
        let history = FakeHistory(Self.history)
        #expect(try search(2, in: history) == .found(Self.history[8]))  // 10 days ago: 31
        #expect(history.asked == [Self.now - Self.day, Self.now - 7 * Self.day, Self.now - 31 * Self.day])
        let all = FakeHistory(Self.history)
        #expect(try search(10, in: all) == .found(Self.history[0]))  // 90 days ago: 366
        #expect(all.asked.count == 4)
    }

    @Test("more than the history holds: how many there are; the whole history read once")
    func tooFew() throws {
        let history = FakeHistory(Self.history)
        #expect(try search(11, in: history) == .tooFew(ended: 10))
        #expect(history.asked == LatestIntervalSearch.windows(now: Self.now))
        #expect(try search(1, in: FakeHistory([])) == .tooFew(ended: 0))
        #expect(CorrectionText.tooFew(11, ended: 10) == "there is no interval @11: the history has 10 ended intervals, @1 to @10 (see 'swctl log')")
    }

    @Test("beyond what it keeps, the window that holds N is read again to take the one at its place")
    func secondReading() throws {
        let history = FakeHistory(Self.history, batch: 4)
        #expect(try search(7, kept: 2, in: history) == .found(Self.history[3]))
        #expect(history.asked == [Self.now - Self.day, Self.now - 7 * Self.day, Self.now - 31 * Self.day, Self.now - 366 * Self.day, Self.now - 366 * Self.day])
        // Every reading closed, the second one too, which returns from within it.
        #expect(history.closed == 5)
    }

    @Test("a window's boundary between two intervals: each @N is the row log --since X numbers N, for X on either side of it and through an interval")
    func windowBoundaryAgreesWithLogSince() throws {
        // In end order, as the daemon streams them: a ends 25 h ago, b 23 h ago (the 1-day
        // boundary, 24 h back, falls between them), c began 30 h ago and ended 2 h ago (it
        // overlaps the boundary: in the first window), d is counting.
        let hour: Int64 = 3_600_000
        func interval(_ id: String, from start: Int64, to end: Int64?) -> Interval {
            Interval(id: id, name: "work", startMs: Self.now - start * hour, endMs: end.map { Self.now - $0 * hour }, elapsedMs: (start - (end ?? 0)) * hour)
        }
        let history = [
            interval("a000000000000000", from: 26, to: 25), interval("b000000000000000", from: 24, to: 23),
            interval("c000000000000000", from: 30, to: 2), interval("d000000000000000", from: 1, to: nil),
        ]
        // @1 and @2 from the first window alone; @3 needs the second.
        let first = FakeHistory(history)
        #expect(try search(2, in: first) == .found(history[1]))
        #expect(first.asked == [Self.now - Self.day])
        #expect(try search(3, in: FakeHistory(history)) == .found(history[0]))
        for sinceHours: Int64 in [24, 25, 24 - 1, 28, 100] {
            let since = Self.now - sinceHours * hour
            let numbering = LogNumbering(name: nil, until: nil)
            var survey = LogNumbering.Survey()
            let reading = FakeHistory(history).open(since)
            while let batch = try reading.next() { numbering.survey(batch, into: &survey) }
            let rows = try #require(survey.numberedRows)
            #expect(!rows.isEmpty)
            for row in rows {
                guard let number = row.number else {
                    #expect(row.interval.endMs == nil)
                    continue
                }
                #expect(try search(number, in: FakeHistory(history)) == .found(row.interval), "log --since \(sinceHours)h numbers \(row.interval.id) @\(number)")
            }
        }
    }

    @Test("every N finds the interval log numbers @N")
    func everyPlace() throws {
        for count in 1...10 {
            #expect(try search(count, in: FakeHistory(Self.history)) == .found(Self.history[10 - count]))
            #expect(try search(count, kept: 3, in: FakeHistory(Self.history)) == .found(Self.history[10 - count]))
        }
    }

    /// What `log`'s table would number each shown interval: `(id, @N)`.
    func numbers(name: String?, until: Int64?, _ history: [Interval]) -> (survey: LogNumbering.Survey, rows: [(String, Int?)]) {
        let numbering = LogNumbering(name: name, until: until)
        var survey = LogNumbering.Survey()
        numbering.survey(history, into: &survey)
        var counter = LogNumbering.Counter(ended: survey.ended)
        var rows: [(String, Int?)] = []
        for interval in history {
            let number = counter.number(of: interval)
            if numbering.shows(interval) { rows.append((interval.id, number)) }
        }
        #expect(counter.matchedSurvey)
        return (survey, rows)
    }

    @Test("log numbers from the end of all ended intervals; a name or --until filter keeps those numbers")
    func logNumbers() throws {
        let all = numbers(name: nil, until: nil, Self.history)
        #expect(all.rows.map(\.1) == [10, 9, 8, 7, 6, 5, 4, 3, 2, 1, nil])
        #expect(all.survey.layout == LogText.Layout(numberWidth: 3, nameWidth: 4))
        // Only "tea" (odd i: a9, a7, … a1): the numbers they have in the whole table.
        let tea = numbers(name: "tea", until: nil, Self.history)
        #expect(tea.rows.map(\.0) == ["a9", "a7", "a5", "a3", "a1"].map { $0 + "00000000000000" })
        #expect(tea.rows.map(\.1) == [10, 8, 6, 4, 2])
        // --until 35 days ago: what began before it, numbered as in the whole table.
        let until = numbers(name: nil, until: Self.now - 35 * Self.day, Self.history)
        #expect(until.rows.map(\.1) == [10, 9, 8, 7, 6, 5])
        for (id, number) in tea.rows + until.rows {
            let interval = try #require(Self.history.first { $0.id == id })
            #expect(try search(try #require(number), in: FakeHistory(Self.history)) == .found(interval))
        }
    }

    @Test("one reading numbers the rows it kept as the second reading would; past keptRows it keeps none")
    func keptRows() throws {
        for (name, until) in [(nil, nil), ("tea", nil), (nil, Self.now - 35 * Self.day), ("work", Self.now - 35 * Self.day)] as [(String?, Int64?)] {
            let numbering = LogNumbering(name: name, until: until)
            var survey = LogNumbering.Survey()
            numbering.survey(Array(Self.history[..<4]), into: &survey)
            numbering.survey(Array(Self.history[4...]), into: &survey)
            let kept = try #require(survey.numberedRows)
            let twice = numbers(name: name, until: until, Self.history).rows
            #expect(kept.map(\.interval.id) == twice.map(\.0))
            #expect(kept.map(\.number) == twice.map(\.1))
        }
        let numbering = LogNumbering(name: nil, until: nil)
        var few = LogNumbering.Survey(keptRows: 10)
        numbering.survey(Self.history, into: &few)
        #expect(few.numberedRows == nil)
        #expect(few.ended == 10)
        #expect(few.shown == 11)
        var enough = LogNumbering.Survey(keptRows: 11)
        numbering.survey(Self.history, into: &enough)
        #expect(enough.numberedRows?.count == 11)
    }

    @Test("log shows the device column only when more than one device appears, and NOTE only with a note")
    func logColumns() {
        var history = Self.history
        #expect(numbers(name: nil, until: nil, history).survey.layout.deviceWidth == 0)
        #expect(numbers(name: nil, until: nil, history).survey.layout.notes == false)
        history[3].device = "laptop-at-home"
        history[4].note = "review"
        let layout = numbers(name: nil, until: nil, history).survey.layout
        #expect(layout.deviceWidth == 14)
        #expect(layout.notes)
        // Among those shown only: history[3] is a6, a "work" one.
        #expect(numbers(name: "tea", until: nil, history).survey.layout.deviceWidth == 0)
    }

    /// The table `LogTable` writes of `history`, keeping at most `keptRows` rows in its first
    /// reading, and what it warned.
    func table(_ history: FakeHistory, name: String? = nil, keptRows: Int) throws -> (text: String, warnings: [String]) {
        var text = ""
        var warnings: [String] = []
        try LogTable(numbering: LogNumbering(name: name, until: nil), keptRows: keptRows).print(
            open: { () throws(ClientError) in history.open(nil) }, write: { text += $0 }, warn: { warnings.append($0) }
        )
        #expect(history.closed == history.asked.count)
        return (text, warnings)
    }

    @Test("log's table read twice (more rows than one reading keeps) is the table read once, and warns of nothing")
    func tableReadTwice() throws {
        for name in [nil, "tea"] as [String?] {
            let once = FakeHistory(Self.history)
            let twice = FakeHistory(Self.history)
            let one = try table(once, name: name, keptRows: 10_000)
            let two = try table(twice, name: name, keptRows: 2)
            #expect(once.asked.count == 1)
            #expect(twice.asked.count == 2)
            #expect(two.text == one.text)
            #expect(two.warnings.isEmpty)
            #expect(one.text.split(separator: "\n").count == (name == nil ? 12 : 6))
        }
        // Nothing shown: nothing written, not even the header.
        #expect(try table(FakeHistory(Self.history), name: "none", keptRows: 2).text.isEmpty)
    }

    @Test("log's table read twice over a history that grew meanwhile: the rows, the new one unnumbered, and a warning on stderr")
    func tableOfAGrownHistory() throws {
        let late = Self.ended("b000000000000000", "tea", endingDaysAgo: 0)
        let grown = try table(FakeHistory(Self.history, grows: late), keptRows: 2)
        #expect(grown.warnings == [LogTable.changedWarning])
        let rows = grown.text.split(separator: "\n")
        #expect(rows.count == 13)
        // The new row (read last) has no number: the survey counted 10 ended intervals.
        let last = try #require(rows.last)
        #expect(last.hasPrefix(" ") && last.contains("b0000000"))
        #expect(!last.contains("@"))
    }

    @Test("undo says what it took back and the interval as it is now")
    func undoneText() {
        let interval = Self.history[9]
        let line = LogText.line(interval)
        #expect(CorrectionText.undone(.track, interval) == "undid a track; removed " + line)
        #expect(CorrectionText.undone(.amend, interval) == "undid an amend; now " + line)
        #expect(CorrectionText.undone(.delete, interval) == "undid a delete; restored " + line)
    }

    @Test("a history that grew between the two readings gives no number it cannot vouch for")
    func grownHistory() {
        var counter = LogNumbering.Counter(ended: 1)
        #expect(counter.number(of: Self.history[8]) == 1)
        #expect(counter.number(of: Self.history[9]) == nil)
        #expect(!counter.matchedSurvey)
    }
}
