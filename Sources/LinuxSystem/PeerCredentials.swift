import Glibc

/// Who is at the other end of a Unix socket, as the kernel saw it at `connect`.
///
/// Laid out as Linux's `struct ucred`, which Glibc's module does not export (it sits
/// behind `_GNU_SOURCE`), so that `getsockopt(SO_PEERCRED)` can fill it directly.
package struct PeerCredentials: Equatable, Sendable {
    package var pid: pid_t
    package var uid: uid_t
    package var gid: gid_t

    package init(pid: pid_t, uid: uid_t, gid: gid_t) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}
