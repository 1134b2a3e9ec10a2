extension StopwatchClient {
    /// Where the daemon is: its socket on this machine, or a command whose standard input
    /// and output speak varlink to one (the varlink bridge, such as `ssh HOST swctl bridge`).
    public enum Endpoint: Sendable, Equatable, CustomStringConvertible {
        /// A Unix socket path (`@name` for an abstract socket).
        case socket(String)
        /// A command, argv[0] first (looked up in `$PATH`), started for each connection with
        /// this process's environment and ended when the connection closes.
        case bridge([String])

        /// The socket's path, or the command line.
        public var description: String {
            switch self {
            case .socket(let path): path
            case .bridge(let arguments): ChildProcessTransport.shown(arguments)
            }
        }
    }

    /// The daemon on `host` (`[USER@]HOST`), through `ssh -T -o BatchMode=yes -o
    /// ServerAliveInterval=10 -o ServerAliveCountMax=3 -- HOST swctl bridge`: no terminal,
    /// no password prompt that nobody would see, and a session whose connection died
    /// silently (a suspend, a network gone) ends within 40 s, so that a watch notices and
    /// reconnects. The `--` ends ssh's options (OpenSSH's getopt), so a `host` starting with
    /// `-` is a host name ssh refuses, never an option such as `-oProxyCommand=…`.
    /// `ssh` replaces `ssh` with a command and its first arguments (`["ssh", "-i",
    /// "~/.ssh/stopwatch"]`; `swctl` splits `$STOPWATCHD_SSH` on whitespace for it).
    /// `swctl` must be on the PATH of a non-interactive ssh session on `host`.
    public static func sshBridge(host: String, ssh: [String] = ["ssh"]) -> Endpoint {
        .bridge((ssh.isEmpty ? ["ssh"] : ssh) + ["-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3", "--", host, "swctl", "bridge"])
    }
}
