import Glibc

/// How LinuxSystem's wrappers call libc, so that everything above LinuxSystem sees Swift
/// types and thrown `Errno`s, never `-1` and a global `errno`.
package enum Posix {
    /// Runs a system call that returns `-1` and sets `errno` on failure, and turns that into
    /// a thrown `Errno`; a call interrupted by a signal (`EINTR`) is made again, so callers
    /// never see `EINTR`. In LinuxSystem, the calls that cannot simply be made again handle
    /// `EINTR` themselves, each where it is made: `close` (never retried: a retried close may
    /// close a descriptor another thread just opened), `nanosleep` (resumed with the time
    /// left, `CurrentProcess.sleep`) and `epoll_wait` (returns to its caller, which first
    /// checks whether it is to stop, `EpollDescriptor.wait`).
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
