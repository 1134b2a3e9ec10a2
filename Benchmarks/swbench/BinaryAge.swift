import Glibc
import LinuxSystem

/// Catches measuring stale binaries: `swift run swbench` rebuilds swbench alone, so the
/// stopwatchd and swctl beside it may predate the library they are built from.
enum BinaryAge {
    /// A warning for each of `binaries` older than the newest object file of StopWatchCore
    /// in `buildDirectory` (SwiftPM's, where they were linked).
    static func warnings(for binaries: [String], buildDirectory: String) -> [String] {
        let objects = buildDirectory + "/StopWatchCore.build"
        let names = ((try? FileSystem.entries(of: objects)) ?? []).filter { $0.hasSuffix(".o") }
        let newestObject = names.compactMap { modified("\(objects)/\($0)") }.max()
        guard let newestObject else { return [] }
        return binaries.compactMap { binary in
            guard let built = modified(binary), built < newestObject else { return nil }
            return "\(binary) is older than the StopWatchCore it is built from: build every product first (swift build -c release --static-swift-stdlib)"
        }
    }

    /// The modification time of `path`, in seconds since the epoch.
    private static func modified(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mtim.tv_sec
    }
}
