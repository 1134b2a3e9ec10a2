import Glibc

public enum Signals {
    /// Ignores `signal` in this process: for `SIGPIPE`, so that writing to a closed socket
    /// returns `EPIPE` instead of killing the daemon, and before handling `SIGTERM` with a
    /// dispatch source, so that the default action does not run first.
    public static func ignore(_ signal: CInt) {
        Glibc.signal(signal, SIG_IGN)
    }

    /// "SIGTERM" for SIGTERM: for logs.
    public static func name(of signal: CInt) -> String {
        switch signal {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGHUP: "SIGHUP"
        default: "signal \(signal)"
        }
    }
}
