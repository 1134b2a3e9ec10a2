import Glibc
import LinuxSystem

/// swbench's command line.
struct BenchOptions {
    var daemonPath: String
    var swctlPath: String
    var smoke = false
    var jsonPath: String?
    var driftSeconds: Int?
    /// Measurement groups to run; nil runs all.
    var only: Set<BenchGroup>?
    /// The C client's source; nil looks in the usual places (`CClient.sourceCandidates`).
    var cClientSource: String?

    static let usage = """
        usage: swbench [--smoke] [--json FILE] [--drift-seconds N] [--only GROUPS]
                       [--daemon PATH] [--swctl PATH] [--c-client-source PATH]

        Starts its own stopwatchd daemons on temporary sockets and measures the figures of
        SPEC §7, each next to a baseline measured in the same run; prints a table.

          --smoke            every measurement very briefly (checks that it works)
          --json FILE        also write the results as JSON
          --drift-seconds N  the drift period (default 600, 5 with --smoke)
          --only GROUPS      comma-separated: \(BenchGroup.allCases.map(\.rawValue).joined(separator: ","))
          --daemon PATH      the stopwatchd to measure (default: beside swbench)
          --swctl PATH       the swctl to measure (default: beside swbench)
          --c-client-source PATH
                             the C baseline of swctl status (default:
                             Benchmarks/c-client/status.c here, else in the
                             repository two levels above swbench); the raw
                             fan-out's (raw-fanout.c) and the calls' echo
                             (echo.c) are looked for beside it, then in those
                             places
        """

    /// Reads the arguments (without the program name); nil for `--help`.
    static func parse(_ arguments: [String]) throws(BenchError) -> BenchOptions? {
        let directory = FileSystem.directoryName(of: executablePath())
        var options = BenchOptions(daemonPath: directory + "/stopwatchd", swctlPath: directory + "/swctl")
        var remaining = arguments[...]
        func value(_ name: String) throws(BenchError) -> String {
            guard let value = remaining.popFirst() else { throw BenchError("\(name) needs a value") }
            return value
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "-h", "--help": return nil
            case "--smoke": options.smoke = true
            case "--json": options.jsonPath = try value(argument)
            case "--daemon": options.daemonPath = try value(argument)
            case "--swctl": options.swctlPath = try value(argument)
            case "--drift-seconds":
                let text = try value(argument)
                guard let seconds = Int(text), seconds >= 1 else { throw BenchError("--drift-seconds: '\(text)' is not a whole number of seconds") }
                options.driftSeconds = seconds
            case "--only":
                var groups: Set<BenchGroup> = []
                for name in try value(argument).split(separator: ",") {
                    guard let group = BenchGroup(rawValue: String(name)) else { throw BenchError("--only: no group '\(name)'") }
                    groups.insert(group)
                }
                options.only = groups
            case "--c-client-source": options.cClientSource = try value(argument)
            default:
                throw BenchError("unknown option '\(argument)'")
            }
        }
        return options
    }

    func runs(_ group: BenchGroup) -> Bool {
        only?.contains(group) ?? true
    }

    /// This program's own path, from /proc/self/exe.
    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
