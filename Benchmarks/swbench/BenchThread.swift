import Glibc
import LinuxSystem

/// A POSIX thread running one closure; `join()` waits for it and returns what it returned.
///
/// Not Dispatch: its pool runs only as many blocking jobs at once as there are cores, and
/// the clients of a throughput run must all be blocked in calls at the same time.
final class BenchThread<Result: Sendable> {
    private let thread: pthread_t
    private let result: Locked<Result?>

    init(_ body: @escaping @Sendable () -> Result) {
        let result = Locked<Result?>(nil)
        let start = ThreadStart { result.withLock { $0 = body() } }
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { argument in
            Unmanaged<ThreadStart>.fromOpaque(argument!).takeRetainedValue().body()
            return nil
        }, Unmanaged.passRetained(start).toOpaque())
        precondition(status == 0, "pthread_create failed: \(status)")
        self.thread = thread
        self.result = result
    }

    /// Waits for the thread to end; call it once.
    func join() -> Result {
        pthread_join(thread, nil)
        return result.withLock { $0! }
    }
}

/// What a new thread runs, passed through `pthread_create`'s untyped argument.
private final class ThreadStart {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
