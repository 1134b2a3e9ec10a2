import Foundation

/// Where the binaries under test are: beside the test bundle, in SwiftPM's build folder.
enum Binaries {
    static let directory: String = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // The test runner may sit inside the .xctest bundle on some platforms.
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("stopwatchd").path), url.path != "/" {
            url.deleteLastPathComponent()
        }
        return url.path
    }()

    static var stopwatchd: String { directory + "/stopwatchd" }

    /// Whether this run is under a sanitizer (CI sets their options), which makes everything
    /// several times slower: timing bounds and load sizes take that into account.
    static var sanitized: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["TSAN_OPTIONS"] != nil || environment["ASAN_OPTIONS"] != nil
    }

    /// The environment child processes start with: a plain PATH, and the sanitizer options
    /// of this run, so a sanitized daemon reports the same way.
    static let childEnvironment: [String: String] = {
        var environment = ["PATH": "/usr/bin:/bin"]
        for name in ["TSAN_OPTIONS", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "SWIFT_BACKTRACE"] {
            environment[name] = ProcessInfo.processInfo.environment[name]
        }
        return environment
    }()
    static var swctl: String { directory + "/swctl" }
}
