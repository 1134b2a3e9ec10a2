/// Where the daemon's socket is, by the same rules in daemon and client (SPEC §4, §5).
public enum SocketLocation {
    public static let systemPath = "/run/stopwatchd/stopwatchd.sock"

    /// `$XDG_RUNTIME_DIR/stopwatchd/stopwatchd.sock`, when `XDG_RUNTIME_DIR` is set.
    public static func userPath(_ environment: ProcessEnvironment) -> String? {
        environment["XDG_RUNTIME_DIR"].map { "\($0)/stopwatchd/stopwatchd.sock" }
    }

    /// The daemon's path when neither `--socket` nor socket activation names one:
    /// `$STOPWATCHD_SOCKET`, else the user path for a non-root user, else the system path.
    public static func daemonPath(environment: ProcessEnvironment, isRoot: Bool) -> String {
        if let path = environment["STOPWATCHD_SOCKET"] { return path }
        if !isRoot, let path = userPath(environment) { return path }
        return systemPath
    }

    public enum ClientChoice: Equatable, Sendable {
        /// `--socket PATH`
        case path(String)
        /// `--user`
        case user
        /// `--system`
        case system
        /// no option
        case automatic
    }

    /// The client's path: `--socket` > `$STOPWATCHD_SOCKET` > `--user`/`--system` > the user
    /// socket if it exists > the system socket. Nil for `--user` without `XDG_RUNTIME_DIR`.
    public static func clientPath(
        _ choice: ClientChoice,
        environment: ProcessEnvironment,
        exists: (String) -> Bool = { (try? FileSystem.kind(at: $0)) == .socket }
    ) -> String? {
        switch choice {
        case .path(let path): return path
        case .user: return environment["STOPWATCHD_SOCKET"] ?? userPath(environment)
        case .system: return environment["STOPWATCHD_SOCKET"] ?? systemPath
        case .automatic:
            if let path = environment["STOPWATCHD_SOCKET"] { return path }
            if let path = userPath(environment), exists(path) { return path }
            return systemPath
        }
    }
}
