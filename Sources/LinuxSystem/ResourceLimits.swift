import Glibc

package enum ResourceLimits {
    /// Raises this process's soft limit on open files to its hard limit (systemd starts
    /// services at 1024 soft, far under the hard limit) and returns the limit now in force.
    package static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(CInt(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY is all ones, which clamps to Int.max.
        return Int(clamping: limit.rlim_cur)
    }
}
