import StopwatchDaemon
import Glibc
import LinuxSystem
import StopwatchProtocol

/// A history as the daemon keeps it (SPEC §4 "History", format 2): the marker
/// `history/stopwatchd-history.json` in the state directory and this machine's device folder
/// `history/DEVICE-ID/` holding `YYYY-MM.jsonl`, one `HistoryLine` per interval in the month
/// of its end (UTC), in the order they ended, and then corrections (`HistoryCorrection`:
/// amends and deletes of intervals spread over all of it) in the last month. With peers
/// (SPEC §4 "History across devices"), other devices' folders `history/<32 hex>/` beside it,
/// each with its `device.json`: the intervals dealt out among the devices in turn (so every
/// device's months interleave with the others' in time) and the corrections too, each device
/// correcting intervals of any device, and some of them `track` records (an interval made by
/// hand: no line of its own). Written by swbench for a daemon to stream; read back and parsed
/// as the baseline of `swctl report`.
enum HistoryFiles {
    /// How many stopwatches the intervals are spread over.
    static let names = 24
    /// How far back the oldest interval ends.
    static let years: Int64 = 3
    private static let millisecondsPerDay: Int64 = 86_400_000
    /// The peers' device ids and names (`write`'s `peers` takes the first ones).
    static let peerDevices = [
        ("5eed0000000000000000000000000001", "bench-desk"), ("5eed0000000000000000000000000002", "bench-home"),
    ]

    /// What was written.
    struct Written {
        let intervals: Int
        let today: Int
        let bytes: Int
        let files: Int
        /// The correction records: amends, deletes and tracks.
        let corrections: Int
        /// Of `corrections`, the `track` records, and those made by a device other than the
        /// one whose folder holds the interval line they name.
        let tracks: Int
        let crossDevice: Int
        /// The device folder the months are in (this device's).
        let monthsDirectory: String
        /// Every device folder written, this device's first.
        let deviceDirectories: [String]
    }

    /// One device's folder being written: its months, a month at a time.
    private struct DeviceFolder {
        let directory: String
        var month: HistoryMonth?
        var buffer: [UInt8] = []
        var bytes = 0
        var files = 0

        init(directory: String) {
            self.directory = directory
            buffer.reserveCapacity(4 << 20)
        }

        /// Moves on to `month` (a new file: ends only grow), writing what the last one holds.
        mutating func begin(_ next: HistoryMonth) throws(Errno) {
            guard next != month else { return }
            try flush()
            files += 1
            month = next
        }

        mutating func flush() throws(Errno) {
            guard let month, !buffer.isEmpty else { return }
            let file = try FileDescriptor.open("\(directory)/\(month.fileName)", O_WRONLY | O_CREAT | O_APPEND, mode: 0o600)
            defer { file.close() }
            try file.writeAll(buffer)
            bytes += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }
    }

    /// Writes `count` intervals into `historyDirectory`: `today` of them ended today (local
    /// time, as `swctl log --since today` reads it) and the rest, evenly, over the `years`
    /// before yesterday. Each month is built in memory and written with a few large writes.
    /// With `peers` (at most `peerDevices.count`), the intervals and corrections are dealt out
    /// among this device and the peers (see the type's comment).
    static func write(
        _ count: Int, today: Int, corrections: Int = 0, peers: Int = 0, now: Int64, into historyDirectory: String
    ) throws(BenchError) -> Written {
        guard let device = DeviceIdentity.machineDerived() else {
            throw BenchError("cannot read /etc/machine-id: the daemon's device folder is named after it")
        }
        let peerDevices = Self.peerDevices.prefix(peers)
        var folders = [DeviceFolder(directory: historyDirectory + "/" + device)] + peerDevices.map { DeviceFolder(directory: historyDirectory + "/" + $0.0) }
        let todayStart = localMidnight(before: now)
        let pastCount = max(count - today, 0)
        let pastFirst = todayStart - years * 365 * millisecondsPerDay
        let pastLast = todayStart - millisecondsPerDay
        let pastSpacing = pastCount > 1 ? (pastLast - pastFirst) / Int64(pastCount - 1) : 0
        let todaySpacing = max((now - 1_000 - todayStart) / Int64(today + 1), 1)
        // Every `stride`-th interval is corrected: its id, form and device kept for the records.
        let stride = corrections > 0 ? max((pastCount + today) / corrections, 1) : Int.max
        var corrected: [(interval: Interval, device: Int)] = []
        corrected.reserveCapacity(corrections)
        var tracks = 0, crossDevice = 0
        do {
            for folder in folders { try FileSystem.makeDirectories(folder.directory, mode: 0o700) }
            let marker = try FileDescriptor.open("\(historyDirectory)/stopwatchd-history.json", O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
            try marker.writeAll(Array(#"{"format":2}"#.utf8) + [10])
            marker.close()
            for (index, peer) in peerDevices.enumerated() {
                let file = try FileDescriptor.open("\(folders[index + 1].directory)/device.json", O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
                defer { file.close() }
                try file.writeAll(Array(#"{"id":"\#(peer.0)","name":"\#(peer.1)","host":"\#(peer.1)"}"#.utf8) + [10])
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
                let holder = index % folders.count
                if index % stride == 0, corrected.count < corrections { corrected.append((interval, holder)) }
                try folders[holder].begin(HistoryMonth(epochMilliseconds: end))
                HistoryLine.encode(interval, into: &folders[holder].buffer)
                if folders[holder].buffer.count >= 4 << 20 { try folders[holder].flush() }
            }
            // The corrections, made a minute ago: in each device's last month (today's) after
            // its intervals. Of every ten, one delete, and with peers one track; the rest amends
            // (half the time, a note). With peers, each is made by the devices in turn, a run of
            // three at a time: whichever device holds the interval's line.
            let made = now - 60_000
            for (number, (interval, holder)) in corrected.enumerated() {
                let maker = folders.count > 1 ? (number / 3) % folders.count : 0
                try folders[maker].begin(HistoryMonth(epochMilliseconds: made))
                let record = IntervalIdentity.hex(UInt64(number) &* 0xD6E8_FEB8_6659_FD93 | 1)
                let change: HistoryCorrection.Change
                if number % 10 == 9 {
                    change = .form(.delete, id: interval.id, interval: nil)
                } else if number % 10 == 8, folders.count > 1 {
                    // A new interval, tracked by hand yesterday: it has no line.
                    var tracked = interval
                    tracked.id = IntervalIdentity.hex(UInt64(number) &* 0xA076_1D64_78BD_642F | 1)
                    tracked.startMs = todayStart - millisecondsPerDay + Int64(number) * 1_000
                    tracked.endMs = tracked.startMs + 600_000
                    tracked.elapsedMs = 600_000
                    change = .form(.track, id: tracked.id, interval: tracked)
                    tracks += 1
                } else {
                    var amended = interval
                    amended.note = "corrected \(number)"
                    change = .form(.amend, id: interval.id, interval: amended)
                }
                if case .form(let operation, _, _) = change, operation != .track, maker != holder { crossDevice += 1 }
                HistoryCorrection(record: record, madeMs: made, change: change).encode(into: &folders[maker].buffer)
            }
            for index in folders.indices { try folders[index].flush() }
        } catch {
            throw BenchError("cannot write the history into \(historyDirectory): \(error)")
        }
        return Written(
            intervals: pastCount + today, today: today, bytes: folders.reduce(0) { $0 + $1.bytes },
            files: folders.reduce(0) { $0 + $1.files }, corrections: corrected.count, tracks: tracks, crossDevice: crossDevice,
            monthsDirectory: folders[0].directory, deviceDirectories: folders.map(\.directory)
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

    /// `parseAll(in:)` over every device folder in `directories`, added up.
    static func parseAll(in directories: [String]) throws(BenchError) -> (intervals: Int, corrections: Int, elapsedMs: Int64) {
        var all = (intervals: 0, corrections: 0, elapsedMs: Int64(0))
        for directory in directories {
            let parsed = try parseAll(in: directory)
            all.intervals += parsed.intervals
            all.corrections += parsed.corrections
            all.elapsedMs &+= parsed.elapsedMs
        }
        return all
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
