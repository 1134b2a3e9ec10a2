import StopwatchDaemon
import Glibc
import LinuxSystem
import StopWatchCore
import Varlink

/// Stopwatch state files, as the daemon keeps them (`<name>.json`, a `StopwatchRecord`):
/// written by swbench for a daemon to restore, and read for what a daemon wrote.
enum StateFiles {
    /// Writes `count` counting stopwatches into `directory`, their origins spread over the
    /// second as real ones would be (so their ticks do not all fall together). Returns the
    /// bytes written.
    static func writeCounting(_ count: Int, into directory: String) throws(BenchError) -> Int {
        let now = ClockReading.now()
        var bytes = 0
        do {
            try FileSystem.makeDirectories(directory, mode: 0o700)
            for index in 0..<count {
                let elapsed = Duration.seconds(60 + index % 3_600) + .microseconds((index * 7_919) % 1_000_000)
                let snapshot = StopWatchSnapshot.counting(since: now.boot - elapsed, now: now.boot)
                let name = "sw\(index)"
                let json = StopwatchRecord(name: name, snapshot: snapshot, at: now).json.serialized
                let file = try FileDescriptor.open("\(directory)/\(name).json", O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
                defer { file.close() }
                try file.writeAll(json)
                bytes += json.count
            }
        } catch {
            throw BenchError("cannot write state files into \(directory): \(error)")
        }
        return bytes
    }

    /// Writes counting stopwatches `names` into `directory`, each holding `laps` laps (split
    /// times half a second apart, with odd milliseconds, as a person's would have) and
    /// counting a minute past the last. Returns the bytes of one file.
    static func writeCounting(_ names: [String], laps: Int, into directory: String) throws(BenchError) -> Int {
        let now = ClockReading.now()
        let splits = (0..<laps).map { Duration.milliseconds(500 * ($0 + 1) + ($0 * 7_919) % 499) }
        let elapsed = (splits.last ?? .zero) + .seconds(60)
        var bytes = 0
        do {
            try FileSystem.makeDirectories(directory, mode: 0o700)
            for name in names {
                let snapshot = StopWatchSnapshot.counting(since: now.boot - elapsed, laps: splits, now: now.boot)
                let json = StopwatchRecord(name: name, snapshot: snapshot, at: now).json.serialized
                let file = try FileDescriptor.open("\(directory)/\(name).json", O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
                defer { file.close() }
                try file.writeAll(json)
                bytes = json.count
            }
        } catch {
            throw BenchError("cannot write state files into \(directory): \(error)")
        }
        return bytes
    }

    /// Reads and parses every file in `directory` as the daemon's restore does, and returns
    /// how many stopwatches that gave: the least work a restore can do.
    static func readAll(in directory: String) throws(BenchError) -> Int {
        let now = ClockReading.now()
        var restored = 0
        do {
            for file in try FileSystem.entries(of: directory).sorted() where file.hasSuffix(".json") {
                let bytes = try FileSystem.contents(of: "\(directory)/\(file)", limit: 1 << 20)
                let record = try StopwatchRecord(json: JSONParser.parse(bytes))
                if record.snapshot(restoredAt: now).state.isCounting { restored += 1 }
            }
        } catch {
            throw BenchError("cannot read the state files in \(directory): \(error)")
        }
        return restored
    }

    /// Where the counting stopwatch `name` kept in `directory` counts from, on the boot
    /// clock: the daemon's own start instant, to the nanosecond.
    static func origin(of name: String, in directory: String) -> Duration? {
        guard let bytes = try? FileSystem.contents(of: "\(directory)/\(name).json", limit: 1 << 20),
            let json = try? JSONParser.parse(bytes), let record = try? StopwatchRecord(json: json)
        else { return nil }
        return record.originBoot
    }
}
