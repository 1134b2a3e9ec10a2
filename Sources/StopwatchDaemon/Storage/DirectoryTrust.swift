import Glibc
import LinuxSystem
import UserDatabase

/// Whether the daemon may trust a directory it keeps files in (SPEC §4, "Trust of the
/// filesystem"): whoever can add, rename or remove its entries can make the daemon read or
/// write what they choose.
///
/// The rule: the directory must be owned by the daemon's effective user or by root, must
/// not be writable by others (`o+w`, sticky bit or not: a sticky `/tmp` lets anyone plant
/// a name), and may be writable by its group only when that group is the daemon's own
/// effective group (the user-private group of a `umask 002` setup, or root's group for
/// root), whose members the daemon already trusts with its files.
package struct DirectoryTrust: Sendable {
    package let userID: uid_t
    package let groupID: gid_t

    package init(userID: uid_t, groupID: gid_t) {
        self.userID = userID
        self.groupID = groupID
    }

    /// The daemon's own effective user and group.
    package static var currentProcess: DirectoryTrust {
        DirectoryTrust(userID: Users.effectiveUserID, groupID: Users.effectiveGroupID)
    }

    /// Nil when `path`, whose status is `status`, may be trusted; otherwise what is wrong
    /// with it and the command that fixes it.
    package func problem(with status: FileStatus, path: String) -> String? {
        if status.ownerID != userID, status.ownerID != 0 {
            return "\(path) is owned by uid \(status.ownerID), not by this user (uid \(userID)) or root; give it to this user (chown \(userID) \(path)) or choose another directory"
        }
        if status.mode & S_IWOTH != 0 {
            return "\(path) is writable by others; remove that (chmod o-w \(path)) or choose another directory"
        }
        if status.mode & S_IWGRP != 0, status.groupID != groupID {
            return "\(path) is writable by its group (gid \(status.groupID)); remove that (chmod g-w \(path)) or choose another directory"
        }
        return nil
    }
}
