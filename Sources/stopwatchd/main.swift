import LinuxSystem
import StopwatchDaemon
import StopwatchProtocol

// Parse options, wire, run: the daemon itself is StopWatchCore's `Daemon`.

// Before anything opens a file: started with standard error closed, the daemon's socket or
// a client's could take its number, and the log would go to a client.
CurrentProcess.openStandardDescriptorsOnDevNull()
// What the parent left that hooks and the daemon must not inherit: an ignored SIGCHLD (hooks'
// exit statuses would be lost) or a blocked mask; descriptors a shell left open (every hook
// would get them). nohup's SIGHUP and a background job's SIGINT stay ignored (see
// `Daemon.handleTerminationSignals`).
Signals.resetInherited()
CurrentProcess.closeInheritedDescriptorsOnExec()
do {
    switch try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst())) {
    case .help:
        print(DaemonOptions.usage)
    case .version:
        print("stopwatchd \(Version.number)")
    case .run(let options):
        try Daemon.checkUsage(options, environment: .current)
        try Daemon.run(options: options, environment: .current)
    }
} catch let error as UsageError {
    Diagnostics.fail("stopwatchd: \(error.message) (see stopwatchd --help)", status: 2)
} catch {
    Diagnostics.fail("stopwatchd: \(error)", status: 1)
}
