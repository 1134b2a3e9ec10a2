import StopwatchDaemon
import Glibc
import LinuxSystem
import StopwatchProtocol

/// A history as the daemon keeps it (SPEC §4 "History", format 2): the marker
/// `history/stopwatchd-history.json` in the state directory and this machine's device folder
/// `history/DEVICE-ID/` holding `YYYY-MM.jsonl`, one `HistoryLine` per interval in the month
/// of its end (UTC), in the order they ended, and then corrections (`HistoryCorrection`:
/// amends and deletes of intervals spread over all of it) in the last month. Written by
/// swbench for a daemon to stream; read back and parsed as the baseline of `swctl report`.
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
        let corrections: Int
        /// The device folder the months are in.
        let monthsDirectory: String
    }

    /// Writes `count` intervals into `historyDirectory`: `today` of them ended today (local
    /// time, as `swctl log --since today` reads it) and the rest, evenly, over the `years`
    /// before yesterday. Each month is built in memory and written with a few large writes.
    static func write(_ count: Int, today: Int, corrections: Int = 0, now: Int64, into historyDirectory: String) throws(BenchError) -> Written {
        guard let device = DeviceIdentity.machineDerived() else {
            throw BenchError("cannot read /etc/machine-id: the daemon's device folder is named after it")
        }
        let monthsDirectory = historyDirectory + "/" + device
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
        // Every `stride`-th interval is corrected: its id and form kept for the records.
        let stride = corrections > 0 ? max((pastCount + today) / corrections, 1) : Int.max
        var corrected: [Interval] = []
        corrected.reserveCapacity(corrections)
        do {
            try FileSystem.makeDirectories(monthsDirectory, mode: 0o700)
            let marker = try FileDescriptor.open("\(historyDirectory)/stopwatchd-history.json", O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
            try marker.writeAll(Array(#"{"format":2}"#.utf8) + [10])
            marker.close()
            func flush() throws(Errno) {
                guard let month, !buffer.isEmpty else { return }
                let file = try FileDescriptor.open("\(monthsDirectory)/\(month.fileName)", O_WRONLY | O_CREAT | O_APPEND, mode: 0o600)
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
                let interval = Interval(
                    id: IntervalIdentity.hex(UInt64(index) &* 0x9E37_79B9_7F4A_7C15), name: "project \(index % names)",
                    startMs: end - length, endMs: end, elapsedMs: length
                )
                if index % stride == 0, corrected.count < corrections { corrected.append(interval) }
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
            // The corrections, made a minute ago: in the last month (today's) after its
            // intervals. Nine amends (half the time, a note) for each delete.
            if !corrected.isEmpty {
                let madeMonth = HistoryMonth(epochMilliseconds: now - 60_000)
                if madeMonth != month {
                    try flush()
                    files += 1
                    month = madeMonth
                }
                for (number, interval) in corrected.enumerated() {
                    let record = IntervalIdentity.hex(UInt64(number) &* 0xD6E8_FEB8_6659_FD93 | 1)
                    let change: HistoryCorrection.Change
                    if number % 10 == 9 {
                        change = .form(.delete, id: interval.id, interval: nil)
                    } else {
                        var amended = interval
                        amended.note = "corrected \(number)"
                        change = .form(.amend, id: interval.id, interval: amended)
                    }
                    HistoryCorrection(record: record, madeMs: now - 60_000, change: change).encode(into: &buffer)
                }
            }
            try flush()
        } catch {
            throw BenchError("cannot write the history into \(historyDirectory): \(error)")
        }
        return Written(
            intervals: pastCount + today, today: today, bytes: bytes, files: files, corrections: corrected.count,
            monthsDirectory: monthsDirectory
        )
    }

    /// Reads every month file in `historyDirectory` (a device folder) and parses every line
    /// into the daemon's `Interval` or `HistoryCorrection`, as its `History` does (newlines
    /// found with the same `memchr`): the least work a `report` can cost.
    /// Returns the intervals and corrections parsed and the intervals' total elapsed time
    /// (used, so not optimized out).
    static func parseAll(in historyDirectory: String) throws(BenchError) -> (intervals: Int, corrections: Int, elapsedMs: Int64) {
        var intervals = 0, corrections = 0
        var elapsed: Int64 = 0
        do {
            for name in try FileSystem.entries(of: historyDirectory).sorted() where HistoryMonth(fileName: name) != nil {
                let bytes = try FileSystem.contents(of: "\(historyDirectory)/\(name)", limit: 1 << 30)
                bytes.withUnsafeBytes { all in
                    var lineStart = 0
                    while lineStart < all.count {
                        let newline = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: all, from: lineStart) ?? all.count
                        let line = UnsafeRawBufferPointer(rebasing: all[lineStart..<newline])
                        if let interval = HistoryLine.parse(line) {
                            intervals += 1
                            elapsed &+= interval.elapsedMs
                        } else if HistoryCorrection.parse(line) != nil {
                            corrections += 1
                        }
                        lineStart = newline + 1
                    }
                }
            }
        } catch {
            throw BenchError("cannot read the history in \(historyDirectory): \(error)")
        }
        return (intervals, corrections, elapsed)
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
