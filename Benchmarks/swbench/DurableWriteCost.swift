import StopwatchDaemon
import Glibc
import LinuxSystem

/// What durable writes cost on the machine and the file system of the run. One durable save
/// of a state file, in context switches: swbench's own thread saves a file of a countdown's
/// size as the daemon saves one (`replaceAtomically`: write, fsync, rename, fsync the
/// directory) and counts its switches, each `fsync` sleeping until the journal has
/// committed; the floor of an expiry that is saved when it happens. One append with
/// `fdatasync`, in switches (the floor issue 30 judges an expiry against) and in time (a
/// history line's).
enum DurableWriteCost {
    /// Switches per save, over `count` saves in `directory`.
    static func switchesPerSave(count: Int, in directory: String, bytes: Int) throws(BenchError) -> Double {
        let content = [UInt8](repeating: UInt8(ascii: " "), count: bytes)
        let stopwatches: DirectoryDescriptor
        do {
            stopwatches = try DirectoryDescriptor.open(directory)
        } catch {
            throw BenchError("cannot open \(directory): \(error)")
        }
        defer { stopwatches.close() }
        guard let before = ownSwitches() else { throw BenchError("cannot read /proc/thread-self/status") }
        for _ in 0..<count {
            do {
                try stopwatches.replaceAtomically("save.json", with: content, through: ".save.json.tmp")
            } catch {
                throw BenchError("cannot save a file in \(directory): \(error)")
            }
        }
        guard let after = ownSwitches() else { throw BenchError("cannot read /proc/thread-self/status") }
        return Double(after - before) / Double(max(count, 1))
    }

    /// Switches per small append with `fdatasync`, over `count` appends to a file in
    /// `directory`: the floor of an expiry that is one append when it happens (issue 30).
    static func switchesPerAppend(count: Int, in directory: String, bytes: Int) throws(BenchError) -> Double {
        let file = try AppendFloor(path: directory + "/append-switches.jsonl", bytes: bytes)
        defer { file.close() }
        guard let before = ownSwitches() else { throw BenchError("cannot read /proc/thread-self/status") }
        for _ in 0..<count { _ = try file.append() }
        guard let after = ownSwitches() else { throw BenchError("cannot read /proc/thread-self/status") }
        return Double(after - before) / Double(max(count, 1))
    }

    /// How long one small append with `fdatasync` takes, in milliseconds, over `count`
    /// appends `spacing` apart to a file in `directory`: the floor of a phase change, whose
    /// interval is in the history (one such append) before it is told.
    static func appendTimes(count: Int, in directory: String, bytes: Int, spacing: Duration) throws(BenchError) -> Samples {
        let file = try AppendFloor(path: directory + "/append-floor.jsonl", bytes: bytes)
        defer { file.close() }
        var times = Samples()
        var next = Now.boot()
        for _ in 0..<count {
            Now.sleep(until: next)
            next += spacing
            times.append(try file.append().inMilliseconds)
        }
        return times
    }

    /// The floor of a durable transition: a file appended to, one line of `bytes` at a time,
    /// each made durable with `fdatasync` before the next.
    struct AppendFloor {
        let path: String
        private let file: FileDescriptor
        private let line: [UInt8]

        init(path: String, bytes: Int) throws(BenchError) {
            var line = [UInt8](repeating: UInt8(ascii: " "), count: max(bytes, 1))
            line[line.count - 1] = UInt8(ascii: "\n")
            self.line = line
            self.path = path
            do {
                file = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_APPEND, mode: 0o600)
            } catch {
                throw BenchError("cannot open \(path): \(error)")
            }
        }

        /// Appends the line and flushes it; how long that took.
        func append() throws(BenchError) -> Duration {
            let start = Now.boot()
            do {
                try file.writeAll(line)
                try file.dataSync()
            } catch {
                throw BenchError("cannot append to \(path): \(error)")
            }
            return Now.boot() - start
        }

        func close() {
            file.close()
        }
    }

    /// Voluntary plus involuntary context switches of the calling thread.
    private static func ownSwitches() -> Int? {
        guard let bytes = try? FileSystem.contents(of: "/proc/thread-self/status", limit: 1 << 16) else { return nil }
        var total = 0, found = 0
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        where line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") {
            guard let count = line.split(separator: ":").last.flatMap({ Int($0.filter { $0 != " " && $0 != "\t" }) }) else { return nil }
            total += count
            found += 1
        }
        return found == 2 ? total : nil
    }
}
