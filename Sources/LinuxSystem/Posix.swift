import Glibc

/// The one place where this package calls libc. Everything above it sees Swift types and
/// thrown `Errno`s, never `-1` and a global `errno`.
package enum Posix {
    /// Runs a system call that returns `-1` and sets `errno` on failure, and turns that into
    /// a thrown `Errno`. The only place that retries `EINTR` — and `close` never comes here,
    /// since a retried close may close a descriptor another thread just opened.
    @discardableResult
    package static func call<Result: BinaryInteger>(_ body: () -> Result) throws(Errno) -> Result {
        while true {
            let result = body()
            guard result == -1 else { return result }
            let error = Errno.current
            guard error == .interrupted else { throw error }
        }
    }

    /// For the calls that return an error number instead of setting `errno` (pthread and
    /// the `_r` lookups).
    package static func check(_ result: CInt) throws(Errno) {
        guard result == 0 else { throw Errno(result) }
    }
}
