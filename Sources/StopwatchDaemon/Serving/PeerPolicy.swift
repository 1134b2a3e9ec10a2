import Glibc
import LinuxSystem
import UserDatabase

/// Who may talk to the daemon: root, the daemon's own user, and members of the allowed
/// group if there is one (SPEC §4).
struct PeerPolicy: Sendable {
    let daemonUID: uid_t
    let allowedGroup: gid_t?

    func allows(_ peer: PeerCredentials, groups: () -> [gid_t]) -> Bool {
        if peer.uid == 0 || peer.uid == daemonUID { return true }
        guard let allowedGroup else { return false }
        return peer.gid == allowedGroup || groups().contains(allowedGroup)
    }

    /// Whether `peer` is held to a share of the connections: everyone but root and the
    /// daemon's own user, who could stop the daemon anyway.
    func isShared(_ peer: PeerCredentials) -> Bool {
        peer.uid != 0 && peer.uid != daemonUID
    }

    /// Checks `peer`, at the other end of `socket`.
    func allows(_ peer: PeerCredentials, on socket: FileDescriptor) -> Bool {
        allows(peer) {
            if let groups = try? socket.peerGroups() { return groups }
            guard let name = try? Users.userName(of: peer.uid) else { return [] }
            return Users.groupIDs(ofUser: name, primaryGroup: peer.gid)
        }
    }
}
