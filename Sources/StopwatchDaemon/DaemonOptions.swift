import StopwatchProtocol

/// What `stopwatchd` was asked to do: its command line, checked.
package struct DaemonOptions: Equatable, Sendable {
    package var tick: Duration = .seconds(1)
    package var socketPath: String?
    package var stateDirectory: String?
    package var allowGroup: String?
    package var logLevel: LogLevel = .info
    package var maximumConnections = 1024
    package var maximumStopwatches = 10_000
    package var maximumMessageSize = 64 * 1024
    /// Laps a stopwatch keeps between resets (SPEC §3): a lap beyond gets `TooManyLaps`.
    package var maximumLaps = 10_000
    /// Connections one user other than root and the daemon's own may hold at once, so that
    /// one member of `--allow-group` cannot take every slot (sd-varlink keeps 1,024 a uid of
    /// 4,096). Nil: a quarter of `maximumConnections`.
    package var maximumConnectionsPerUser: Int?
    /// Events (anything but a tick) that may wait for a watcher that reads slowly before it
    /// is disconnected with `WatchTooSlow` (SPEC §3).
    package var maximumPendingEvents = 1024
    /// How long a message may stay unfinished before the connection is closed.
    package var messageTimeout: Duration = .seconds(30)
    /// How long a client may go without reading what it is sent before it is disconnected.
    package var writeTimeout: Duration = .seconds(30)
    /// How long a connection that neither calls nor watches is kept open.
    package var idleTimeout: Duration = .seconds(60)
    /// Where the hooks are; nil: `HookLocation`'s default.
    package var hookDirectory: String?
    /// How long a hook may run before it gets SIGTERM (and SIGKILL 2 s later).
    package var hookTimeout: Duration = .seconds(30)
    package var maximumHooksRunning = 4
    /// Hook runs that may wait in the outbox (on disk) to start; beyond, the oldest
    /// waiting is dropped, and logged.
    package var hookBacklog = 100_000
    /// Bytes all `History` streams may hold together (SPEC §3): beyond, a stream's encoding
    /// pauses until its reader has taken what it holds.
    package var historyMemory = 32 * 1024 * 1024
    /// Days of history kept: a month whose end is further back is deleted. Nil keeps all.
    package var historyDays: Int?
    /// Other devices' folders in the history folder read at most (`PeerDevices`).
    package var historyDevices = 64
    /// The history folder; nil: `history/` in the state directory.
    package var historyDirectory: String?
    /// This device's id (32 hex digits); nil: derived from /etc/machine-id.
    package var deviceID: String?
    /// This device's name; nil: the host name.
    package var deviceName: String?
    /// Exit (status 0) after this long with nothing to do (`IdleExit`); only under socket
    /// activation, which starts the daemon again. Nil: run until stopped.
    package var exitIdle: Duration?

    package static let minimumTick: Duration = .milliseconds(10)

    package enum Action: Equatable, Sendable {
        case run(DaemonOptions)
        case help
        case version
    }

    package init() {}

    package static let usage = """
        usage: stopwatchd [OPTIONS]

        Keeps named stopwatches and serves them over a varlink Unix socket.

        options:
          --socket PATH            socket to listen on (default: $STOPWATCHD_SOCKET, the socket
                                   systemd passes, $XDG_RUNTIME_DIR/stopwatchd/stopwatchd.sock
                                   for a user, /run/stopwatchd/stopwatchd.sock for root)
          --state-dir DIR          where stopwatches are kept (default: $STATE_DIRECTORY,
                                   $XDG_STATE_HOME/stopwatchd, /var/lib/stopwatchd for root)
          --tick DURATION          update interval while counting, at least 10ms (default 1s)
          --allow-group GROUP      also admit members of GROUP (root and this user always are)
          --log-level LEVEL        debug, info, notice, warning or error (default info)
          --max-connections N      clients at once (default 1024)
          --max-stopwatches N      stopwatches kept (default 10000)
          --max-connections-per-user N
                                   clients at once of one user other than root and this
                                   one (default: a quarter of --max-connections)
          --max-message-size N     bytes in one message (default 65536)
          --max-laps N             laps a stopwatch keeps until reset (default 10000)
          --max-pending-events N   changes a slow watcher may fall behind before it is
                                   disconnected (default 1024)
          --message-timeout DUR    time to finish a message (default 30s)
          --write-timeout DUR      time a client may stop reading (default 30s)
          --idle-timeout DUR       time a client may stay connected without a call or a
                                   watch (default 60s)
          --hook-dir DIR           hooks run at each event (default:
                                   $XDG_CONFIG_HOME/stopwatchd/hooks for a user,
                                   /etc/stopwatchd/hooks for root)
          --hook-timeout DUR       time a hook may run before SIGTERM, then SIGKILL 2s
                                   later (default 30s)
          --max-hooks-running N    hooks running at once, at most 64 (default 4)
          --hook-backlog N         hook runs waiting to start, kept on disk across a stop
                                   or crash; beyond, the oldest is dropped (default
                                   100000)
          --history-memory SIZE    memory all history streams may hold together; a stream
                                   whose reader does not keep up pauses (default 32MiB)
          --history-days N         delete history months that ended more than N days ago
                                   (default: keep all)
          --history-dir DIR        the history folder, one a file-sync tool may share
                                   among devices (default: history/ in the state
                                   directory)
          --history-devices N      other devices' folders read in the history folder
                                   at most; the rest are skipped and said in the
                                   status (default 64, at most 1024)
          --device-id ID           this device's id in the history folder, 32 hex
                                   digits (default: derived from /etc/machine-id)
          --device-name NAME       this device's name in histories (default: the host
                                   name)
          --exit-idle DUR          exit after DUR (at most 24h) with no client, no hook
                                   running, no countdown to expire and nothing unsaved;
                                   only when socket-activated (default: never)
          -h, --help               show this help
          --version                show the version

        durations: 250ms, 1s, 1.5s, 2m (or 2min), 1h, 1h30m, 2d, 1d12h
        """

    /// Reads the arguments (without the program name).
    package static func parse(_ arguments: [String]) throws(UsageError) -> Action {
        var options = DaemonOptions()
        var reader = ArgumentReader(arguments)
        while let argument = reader.next() {
            let name = argument.name
            func value() throws(UsageError) -> String { try reader.value(of: argument) }
            switch name {
            case "-h", "--help": return .help
            case "--version": return .version
            case "--socket": options.socketPath = try nonEmpty(value(), for: name)
            case "--state-dir": options.stateDirectory = try nonEmpty(value(), for: name)
            case "--allow-group": options.allowGroup = try nonEmpty(value(), for: name)
            case "--tick":
                let text = try value()
                guard let tick = DurationText.parse(text) else { throw UsageError("--tick: '\(text)' is not a duration like 250ms, 1s or 1.5s") }
                guard tick >= minimumTick else { throw UsageError("--tick: \(text) is shorter than the minimum, 10ms") }
                options.tick = tick
            case "--log-level":
                let text = try value()
                guard let level = LogLevel(rawValue: text) else {
                    throw UsageError("--log-level: '\(text)' is not one of \(LogLevel.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                options.logLevel = level
            case "--max-connections": options.maximumConnections = try count(value(), for: name)
            case "--max-stopwatches": options.maximumStopwatches = try count(value(), for: name)
            case "--max-connections-per-user": options.maximumConnectionsPerUser = try count(value(), for: name)
            case "--max-message-size": options.maximumMessageSize = try count(value(), for: name, minimum: 1024)
            case "--max-laps": options.maximumLaps = try count(value(), for: name, maximum: 1_000_000)
            case "--max-pending-events": options.maximumPendingEvents = try count(value(), for: name, maximum: 1_000_000)
            case "--message-timeout": options.messageTimeout = try duration(value(), for: name)
            case "--write-timeout": options.writeTimeout = try duration(value(), for: name)
            case "--idle-timeout": options.idleTimeout = try duration(value(), for: name)
            case "--hook-dir": options.hookDirectory = try nonEmpty(value(), for: name)
            case "--hook-timeout": options.hookTimeout = try duration(value(), for: name, maximum: .seconds(24 * 3600))
            case "--max-hooks-running": options.maximumHooksRunning = try count(value(), for: name, maximum: 64)
            // --max-hooks-waiting: its name before the runs waited on disk.
            case "--hook-backlog", "--max-hooks-waiting": options.hookBacklog = try count(value(), for: name, maximum: 10_000_000)
            case "--history-memory": options.historyMemory = try size(value(), for: name, minimum: 64 * 1024)
            case "--history-days": options.historyDays = try count(value(), for: name, maximum: 1_000_000)
            case "--history-devices": options.historyDevices = try count(value(), for: name, minimum: 0, maximum: 1_024)
            case "--history-dir": options.historyDirectory = try nonEmpty(value(), for: name)
            case "--device-id":
                let text = try value()
                guard DeviceIdentity.isValid(text) else { throw UsageError("--device-id: '\(text)' is not 32 lowercase hex digits") }
                options.deviceID = text
            case "--device-name":
                let text = try value()
                guard StopwatchName.isValid(text) else {
                    throw UsageError("--device-name: '\(text)' is not a name (1 to 64 characters, no control characters or '/', no leading or trailing space)")
                }
                options.deviceName = text
            case "--exit-idle": options.exitIdle = try duration(value(), for: name, maximum: .seconds(24 * 3600))
            default:
                throw UsageError("unknown option '\(argument.raw)'")
            }
        }
        return .run(options)
    }

    private static func nonEmpty(_ text: String, for name: String) throws(UsageError) -> String {
        guard !text.isEmpty else { throw UsageError("\(name) needs a non-empty value") }
        return text
    }

    private static func count(_ text: String, for name: String, minimum: Int = 1, maximum: Int = 1_000_000_000) throws(UsageError) -> Int {
        guard let number = Int(text), number >= minimum, number <= maximum else {
            throw UsageError("\(name): '\(text)' is not a whole number from \(minimum) to \(maximum)")
        }
        return number
    }

    /// A number of bytes, with an optional unit: `65536`, `512KiB`, `32MiB`, `1GiB` (K, M, G
    /// and KB, MB, GB are read as the same powers of 1,024).
    private static func size(_ text: String, for name: String, minimum: Int, maximum: Int = 1 << 40) throws(UsageError) -> Int {
        let units: [(suffix: String, factor: Int)] = [
            ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("KB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30),
            ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("B", 1), ("", 1),
        ]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            guard let number = Int(text.dropLast(suffix.count)), number >= 0 else { continue }
            let (bytes, overflow) = number.multipliedReportingOverflow(by: factor)
            guard !overflow, bytes >= minimum, bytes <= maximum else { break }
            return bytes
        }
        throw UsageError("\(name): '\(text)' is not a size from \(minimum / 1024)KiB to \(maximum >> 30)GiB, like 32MiB or 512KiB")
    }

    private static func duration(_ text: String, for name: String, maximum: Duration? = nil) throws(UsageError) -> Duration {
        guard let duration = DurationText.parse(text), duration > .zero else {
            throw UsageError("\(name): '\(text)' is not a duration like 500ms, 30s or 2m")
        }
        if let maximum, duration > maximum {
            throw UsageError("\(name): \(text) is longer than the maximum, \(DurationText.string(maximum))")
        }
        return duration
    }
}
