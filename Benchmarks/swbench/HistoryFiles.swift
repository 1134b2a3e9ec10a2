import StopwatchDaemon
import Glibc
import LinuxSystem
import StopwatchProtocol

/// A history as the daemon keeps it (SPEC §4 "History"): `history/YYYY-MM.jsonl` in the
/// state directory, one `HistoryLine` per interval in the month of its end (UTC), in the
/// order they ended. Written by swbench for a daemon to stream; read back and parsed as the
/// baseline of `swctl report`.
enum HistoryFiles {
    /// How many stopwatches the intervals are spread over.
    static let names = 24
    /// How far back the oldest interval ends.
    static let years: Int64 = 3
    private static let millisecondsPerDay: Int64 = 86_400_000

    /// What was written.
    struct Written {
        let intervals: Int
        let today: Int
        let bytes: Int
        let files: Int
    }

    /// Writes `count` intervals into `historyDirectory`: `today` of them ended today (local
    /// time, as `swctl log --since today` reads it) and the rest, evenly, over the `years`
    /// before yesterday. Each month is built in memory and written with a few large writes.
    static func write(_ count: Int, today: Int, now: Int64, into historyDirectory: String) throws(BenchError) -> Written {
        let todayStart = localMidnight(before: now)
        let pastCount = max(count - today, 0)
        let pastFirst = todayStart - years * 365 * millisecondsPerDay
        let pastLast = todayStart - millisecondsPerDay
        let pastSpacing = pastCount > 1 ? (pastLast - pastFirst) / Int64(pastCount - 1) : 0
        let todaySpacing = max((now - 1_000 - todayStart) / Int64(today + 1), 1)
        var bytes = 0, files = 0
        var month: HistoryMonth?
        var buffer: [UInt8] = []
        buffer.reserveCapacity(4 << 20)
        do {
            try FileSystem.makeDirectories(historyDirectory, mode: 0o700)
            func flush() throws(Errno) {
                guard let month, !buffer.isEmpty else { return }
                let file = try FileDescriptor.open("\(historyDirectory)/\(month.fileName)", O_WRONLY | O_CREAT | O_APPEND, mode: 0o600)
                defer { file.close() }
                try file.writeAll(buffer)
                bytes += buffer.count
                buffer.removeAll(keepingCapacity: true)
            }
            for index in 0..<(pastCount + today) {
                let isToday = index >= pastCount
                let end = isToday
                    ? todayStart + 1 + Int64(index - pastCount + 1) * todaySpacing
                    : pastFirst + Int64(index) * pastSpacing
                // From half a minute to an hour; today's within the day, so that they count whole.
                var length = Int64(30_000 + (index &* 7_919) % 3_600_000)
                if isToday { length = min(length, todaySpacing / 2) }
                let interval = Interval(name: "project \(index % names)", startMs: end - length, endMs: end, elapsedMs: length)
                // Ends only grow: each month is begun once.
                let endMonth = HistoryMonth(epochMilliseconds: end)
                if endMonth != month {
                    try flush()
                    files += 1
                    month = endMonth
                }
                HistoryLine.encode(interval, into: &buffer)
                if buffer.count >= 4 << 20 { try flush() }
            }
            try flush()
        } catch {
            throw BenchError("cannot write the history into \(historyDirectory): \(error)")
        }
        return Written(intervals: pastCount + today, today: today, bytes: bytes, files: files)
    }

    /// Reads every month file in `historyDirectory` and parses every line into the
    /// daemon's `Interval`, as its `History` does (newlines found with the same `memchr`):
    /// the least work a `report` can cost.
    /// Returns the intervals parsed and their total elapsed time (used, so not optimized out).
    static func parseAll(in historyDirectory: String) throws(BenchError) -> (intervals: Int, elapsedMs: Int64) {
        var intervals = 0
        var elapsed: Int64 = 0
        do {
            for name in try FileSystem.entries(of: historyDirectory).sorted() where HistoryMonth(fileName: name) != nil {
                let bytes = try FileSystem.contents(of: "\(historyDirectory)/\(name)", limit: 1 << 30)
                bytes.withUnsafeBytes { all in
                    var lineStart = 0
                    while lineStart < all.count {
                        let newline = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: all, from: lineStart) ?? all.count
                        if let interval = HistoryLine.parse(UnsafeRawBufferPointer(rebasing: all[lineStart..<newline])) {
                            intervals += 1
                            elapsed &+= interval.elapsedMs
                        }
                        lineStart = newline + 1
                    }
                }
            }
        } catch {
            throw BenchError("cannot read the history in \(historyDirectory): \(error)")
        }
        return (intervals, elapsed)
    }

    /// The local midnight that began the day of `now` (epoch milliseconds), as `today` means.
    static func localMidnight(before now: Int64) -> Int64 {
        var seconds = time_t(now / 1_000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        parts.tm_hour = 0
        parts.tm_min = 0
        parts.tm_sec = 0
        parts.tm_isdst = -1
        return Int64(mktime(&parts)) * 1_000
    }
}
