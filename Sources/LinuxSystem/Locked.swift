import Glibc

/// A value guarded by a pthread mutex: `withLock` is the only way in.
///
/// Why not `Synchronization.Mutex`: when contended on Linux it hands ownership over inside
/// the kernel (a priority-inheritance futex), where ThreadSanitizer cannot see it, so every
/// TSan run reports races that are not there and would hide those that are. TSan intercepts
/// pthread mutexes. The uncontended cost is the same: one atomic operation each way.
///
/// Give it a value with a size (a count, a flag), not `Void`: an empty value sits just past
/// the end of the object, and TSan then checks the neighbouring object's memory instead.
package final class Locked<Value> {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // Error-checking, so that locking it again from inside `withLock` traps with a
        // message instead of hanging the process.
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, CInt(PTHREAD_MUTEX_ERRORCHECK))
        let result = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock. Not reentrant: calling `withLock`
    /// on the same lock from inside `body` is a programming error, and traps.
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let result = pthread_mutex_lock(mutex)
        precondition(result != EDEADLK, "Locked.withLock called from inside its own body: it is not reentrant")
        precondition(result == 0, "pthread_mutex_lock failed: \(result)")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

// Safe: `value` is only ever read or written inside `withLock`, between lock and unlock of
// `mutex`, so no two threads touch it at once; `mutex` itself is made for sharing.
extension Locked: @unchecked Sendable where Value: Sendable {}
