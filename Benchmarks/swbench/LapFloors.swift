import Glibc
import LinuxSystem

/// What a Lap on a stopwatch of many laps cannot avoid while its reply carries every lap
/// (`laps_ms`, SPEC §3) and its change is durable before the reply (SPEC §4), measured by
/// swbench itself: moving a reply of that size over the socket (the echo server answering
/// with as many bytes), and replacing a file of that size as the daemon saves one.
enum LapFloors {
    /// Round trips of `request` to echo servers answering with each of `replySizes` bytes,
    /// one of each in turn, `samples` each; in milliseconds, in the order of `replySizes`.
    static func echoRoundTrips(request: [UInt8], replySizes: [Int], samples: Int, directory: String) throws(BenchError) -> [Samples] {
        var servers: [EchoServer] = []
        var connections: [MessageConnection] = []
        defer {
            connections.forEach { $0.close() }
            servers.forEach { $0.stop() }
        }
        for (index, size) in replySizes.enumerated() {
            let path = "\(directory)/echo\(index).sock"
            do {
                servers.append(try EchoServer(path: path, replySize: size))
                connections.append(try MessageConnection(path: path))
            } catch {
                throw BenchError("cannot start or reach an echo server at \(path): \(error)")
            }
        }
        var times = replySizes.map { _ in Samples() }
        do {
            for _ in 0..<samples {
                for (index, connection) in connections.enumerated() {
                    let start = Now.boot()
                    try connection.send(request)
                    _ = try connection.receive()
                    times[index].append((Now.boot() - start).inMilliseconds)
                }
            }
        } catch {
            throw BenchError("an echo round trip failed: \(error)")
        }
        return times
    }

    /// Atomic replacements of a file by files of each of `sizes` bytes, one of each in turn,
    /// `samples` each, done as the daemon saves a stopwatch: the bytes written to a new
    /// temporary file, `fsync`, renamed over the file, `fsync` of the directory. In
    /// milliseconds, in the order of `sizes`. The directory first gets `neighbours` small
    /// files, as many as the daemon's holds: syncing a directory costs with its size.
    static func fileReplacements(sizes: [Int], samples: Int, neighbours: Int, directory: String) throws(BenchError) -> [Samples] {
        var times = sizes.map { _ in Samples() }
        do throws(Errno) {
            let folder = try DirectoryDescriptor.open(directory)
            defer { folder.close() }
            let small = [UInt8](repeating: UInt8(ascii: "1"), count: sizes.min() ?? 0)
            for index in 0..<neighbours {
                let file = try folder.openFile("neighbour\(index).json", [.writeOnly, .create, .exclusive, .noFollow])
                defer { file.close() }
                try file.writeAll(small)
            }
            let contents = sizes.map { [UInt8](repeating: UInt8(ascii: "1"), count: $0) }
            for _ in 0..<samples {
                for (index, bytes) in contents.enumerated() {
                    let start = Now.boot()
                    let file = try folder.openFile("floor\(index).json.tmp", [.writeOnly, .create, .exclusive, .noFollow])
                    do throws(Errno) {
                        try file.writeAll(bytes)
                        try file.sync()
                    } catch {
                        file.close()
                        throw error
                    }
                    file.close()
                    try folder.rename("floor\(index).json.tmp", to: "floor\(index).json")
                    try folder.sync()
                    times[index].append((Now.boot() - start).inMilliseconds)
                }
            }
        } catch {
            throw BenchError("cannot replace files in \(directory): \(error)")
        }
        return times
    }
}
