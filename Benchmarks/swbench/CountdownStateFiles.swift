import StopwatchDaemon
import Glibc
import LinuxSystem
import StopWatchCore
import Varlink

/// State files of counting countdowns for a daemon to restore, as `StateFiles` writes
/// counting stopwatches: a few that expire one after another while swbench watches the
/// daemon (`soon<N>`), and the rest (`cd<N>`) far in the future.
enum CountdownStateFiles {
    /// What was written: the instants of those due soon, on the boot clock, in order.
    struct Written {
        let soon: [(name: String, instant: Duration)]
        let bytes: Int

        /// How many of the soon ones fall in `start...end`.
        func expiries(from start: Duration, to end: Duration) -> Int {
            soon.count { $0.instant >= start && $0.instant <= end }
        }
    }

    /// Writes `count` counting countdowns into `directory`: `soonCount` of them expiring
    /// `spacing` apart from `firstAfter` after they are written (last, so that a slow
    /// machine writing the others does not eat into that), the others from an hour to about
    /// a day from now. Their origins are spread over the past hour, to the microsecond, as real
    /// ones would be; targets are whole milliseconds, as the daemon keeps them, so each
    /// instant is its origin plus its target exactly.
    static func write(
        _ count: Int, soon soonWanted: Int, firstAfter: Duration, spacing: Duration, into directory: String
    ) throws(BenchError) -> Written {
        let soonCount = min(max(soonWanted, 0), count)
        var now = ClockReading.now()
        var soon: [(name: String, instant: Duration)] = []
        var bytes = 0
        do {
            try FileSystem.makeDirectories(directory, mode: 0o700)
            for index in Array(soonCount..<count) + Array(0..<soonCount) {
                let isSoon = index < soonCount
                if index == 0 { now = ClockReading.now() }
                let name = isSoon ? "soon\(index)" : "cd\(index)"
                let origin = now.boot - .seconds(60 + index % 3_600) - .microseconds((index * 7_919) % 1_000_000)
                let wanted = isSoon
                    ? now.boot + firstAfter + spacing * index
                    : now.boot + .seconds(3_600) + .milliseconds(8_641) * index
                // Rounded up to the millisecond: never before the instant wanted.
                let target = Duration.milliseconds((wanted - origin).nanoseconds / 1_000_000 + 1)
                let snapshot = StopWatchSnapshot.counting(since: origin, now: now.boot, target: target)
                let json = StopwatchRecord(name: name, snapshot: snapshot, at: now).json.serialized
                let file = try FileDescriptor.open("\(directory)/\(name).json", O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
                defer { file.close() }
                try file.writeAll(json)
                bytes += json.count
                if isSoon { soon.append((name, origin + target)) }
            }
        } catch {
            throw BenchError("cannot write state files into \(directory): \(error)")
        }
        return Written(soon: soon, bytes: bytes)
    }

    /// How many of the countdowns `names` the daemon has recorded as expired in their state
    /// files (`"expired":true`, saved in the queue turn after the expiry was told).
    static func expiredCount(of names: [String], in directory: String) -> Int {
        names.count { name in
            guard let bytes = try? FileSystem.contents(of: "\(directory)/\(name).json", limit: 1 << 20),
                let json = try? JSONParser.parse(bytes), let record = try? StopwatchRecord(json: json)
            else { return false }
            return record.hasExpired
        }
    }
}
