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

    /// Undoes what the parent left that would change how this process works: every signal
    /// it ignored goes back to its default action, and the signal mask is emptied. An ignored
    /// SIGCHLD, above all, makes the kernel reap children itself, so their exit statuses are
    /// lost and their pids free for reuse while they are still signalled; a blocked SIGTERM
    /// would keep a stop from arriving.
    ///
    /// Kept ignored: `keepingIgnored`, the wishes a parent has a reason for, whose default
    /// action would only stop or end the process, never change what it sees: `nohup`'s
    /// SIGHUP, a shell's SIGINT and SIGQUIT for a job in the background; SIGTTOU, SIGTTIN
    /// and SIGTSTP, whose default would stop a process started in the background (with
    /// `stty tostop`, at its first line of log to the terminal, hanging every client); and
    /// SIGXFSZ, whose default turns a write past the file size limit, an EFBIG the process
    /// handles, into a core dump. Signals with a handler are left alone: exec resets
    /// handlers, so any handler was installed by this process (the runtime's crash
    /// handlers, a sanitizer's). Call first thing, before any thread starts (the mask is
    /// the calling thread's, and threads inherit it).
    package static func resetInherited(
        keepingIgnored kept: [CInt] = [SIGHUP, SIGINT, SIGQUIT, SIGTTOU, SIGTTIN, SIGTSTP, SIGXFSZ]
    ) {
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        // 1 ..< NSIG (65 on Linux), real-time signals included; those glibc keeps for itself
        // (32, 33) and SIGKILL and SIGSTOP refuse the change, harmlessly.
        for signal in CInt(1)..<65 where !kept.contains(signal) && isIgnored(signal) {
            Glibc.signal(signal, SIG_DFL)
        }
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
