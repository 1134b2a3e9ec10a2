import Glibc

package enum Signals {
    /// Ignores `signal` in this process: for `SIGPIPE`, so that writing to a closed socket
    /// returns `EPIPE` instead of killing the daemon, and before handling `SIGTERM` with a
    /// dispatch source, so that the default action does not run first.
    package static func ignore(_ signal: CInt) {
        Glibc.signal(signal, SIG_IGN)
    }

    /// Writing to a pipe or socket whose reader went away then fails with `EPIPE` instead
    /// of killing the process.
    package static func ignoreBrokenPipes() {
        ignore(SIGPIPE)
    }

    /// Whether `signal` was ignored when this process started (by `nohup` for SIGHUP, by a
    /// shell for SIGINT in a background job): a wish to respect.
    package static func isIgnored(_ signal: CInt) -> Bool {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0 else { return false }
        // SIG_IGN is the handler "1" (a C macro Swift imports only as a cast).
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 1
    }

    /// "SIGTERM" for SIGTERM: for logs.
    package static func name(of signal: CInt) -> String {
        switch signal {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGHUP: "SIGHUP"
        default: "signal \(signal)"
        }
    }
}
