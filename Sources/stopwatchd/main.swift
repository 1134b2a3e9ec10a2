import StopWatchCore

// Parse options, wire, run: the daemon itself is StopWatchCore's `Daemon`.
do {
    switch try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst())) {
    case .help:
        print(DaemonOptions.usage)
    case .version:
        print("stopwatchd \(Version.number)")
    case .run(let options):
        try Daemon.run(options: options, environment: .current)
    }
} catch let error as UsageError {
    Diagnostics.fail("stopwatchd: \(error.message) (see stopwatchd --help)", status: 2)
} catch {
    Diagnostics.fail("stopwatchd: \(error)", status: 1)
}
