import LinuxSystem

/// Tells systemd how the service is doing (`sd_notify`, written directly: one datagram per
/// message to `$NOTIFY_SOCKET`, which may be an abstract `@name`). Does nothing when the
/// daemon was not started by systemd.
struct SystemdNotifier {
    private let path: String
    private let socket: FileDescriptor

    /// Nil when `$NOTIFY_SOCKET` is not set, or no socket can be made.
    init?(_ environment: ProcessEnvironment) {
        guard let path = environment["NOTIFY_SOCKET"], path.hasPrefix("/") || path.hasPrefix("@"),
            let socket = try? FileDescriptor.unixDatagramSocket()
        else { return nil }
        self.path = path
        self.socket = socket
    }

    /// Sends `fields` (e.g. `["READY=1", "STATUS=…"]`) as one message; a failure is
    /// returned, never fatal: the service runs on without systemd hearing from it.
    @discardableResult
    func notify(_ fields: [String]) -> Errno? {
        do {
            try socket.send(Array(fields.joined(separator: "\n").utf8), toPath: path)
            return nil
        } catch {
            return error
        }
    }

    /// The watchdog interval systemd asked for (`WATCHDOG_USEC`, for this process if
    /// `WATCHDOG_PID` names one), if any.
    static func watchdogInterval(_ environment: ProcessEnvironment) -> Duration? {
        if let pid = environment["WATCHDOG_PID"].flatMap({ Int32($0) }), pid != CurrentProcess.id { return nil }
        guard let microseconds = environment["WATCHDOG_USEC"].flatMap({ Int64($0) }), microseconds > 0 else { return nil }
        return .microseconds(microseconds)
    }
}
