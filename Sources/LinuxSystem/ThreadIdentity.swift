import Glibc

/// Which thread this is, to compare with another thread's identity.
package struct ThreadIdentity: Equatable, Sendable {
    private let thread: pthread_t

    package static var current: ThreadIdentity { ThreadIdentity(thread: pthread_self()) }

    package static func == (lhs: ThreadIdentity, rhs: ThreadIdentity) -> Bool {
        pthread_equal(lhs.thread, rhs.thread) != 0
    }
}
