import LinuxSystem

/// Where the daemon's socket is, by the same rules in daemon and client (SPEC §4, §5).
package enum SocketLocation {
    package static let systemPath = "/run/stopwatchd/stopwatchd.sock"

    /// `$XDG_RUNTIME_DIR/stopwatchd/stopwatchd.sock`, when `XDG_RUNTIME_DIR` is set.
    package static func userPath(_ environment: ProcessEnvironment) -> String? {
        environment["XDG_RUNTIME_DIR"].map { "\($0)/stopwatchd/stopwatchd.sock" }
    }

    /// The daemon's path when neither `--socket`, `$STOPWATCHD_SOCKET` nor socket activation
    /// names one: the user path for a non-root user, else the system path.
    package static func defaultDaemonPath(environment: ProcessEnvironment, isRoot: Bool) -> String {
        if !isRoot, let path = userPath(environment) { return path }
        return systemPath
    }

    package enum ClientChoice: Equatable, Sendable {
        /// `--socket PATH`
        case path(String)
        /// `--user`
        case user
        /// `--system`
        case system
        /// no option
        case automatic
    }

    /// The client's path: an explicit option (`--socket`, `--user`, `--system`) >
    /// `$STOPWATCHD_SOCKET` > the user socket if it exists > the system socket. Nil for
    /// `--user` without `XDG_RUNTIME_DIR`.
    package static func clientPath(
        _ choice: ClientChoice,
        environment: ProcessEnvironment,
        exists: (String) -> Bool = { (try? FileSystem.kind(at: $0)) == .socket }
    ) -> String? {
        switch choice {
        case .path(let path): return path
        case .user: return userPath(environment)
        case .system: return systemPath
        case .automatic:
            if let path = environment["STOPWATCHD_SOCKET"] { return path }
            if let path = userPath(environment), exists(path) { return path }
            return systemPath
        }
    }
}
