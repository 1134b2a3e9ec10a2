import Glibc
import LinuxSystem

/// Users and groups, from the system's databases (NSS).
package enum Users {
    package static var effectiveUserID: uid_t { geteuid() }
    package static var effectiveGroupID: gid_t { getegid() }

    /// The id of group `name`, or nil when there is no such group.
    package static func groupID(named name: String) throws(Errno) -> gid_t? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        while true {
            let status = getgrnam_r(name, &group, &buffer, buffer.count, &result)
            if status == ERANGE, buffer.count < 1 << 20 {
                buffer = [CChar](repeating: 0, count: buffer.count * 4)
                continue
            }
            try Posix.check(status)
            return result == nil ? nil : group.gr_gid
        }
    }

    /// The name of user `uid`, or nil when it has none.
    package static func userName(of uid: uid_t) throws(Errno) -> String? {
        var passwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        while true {
            let status = getpwuid_r(uid, &passwd, &buffer, buffer.count, &result)
            if status == ERANGE, buffer.count < 1 << 20 {
                buffer = [CChar](repeating: 0, count: buffer.count * 4)
                continue
            }
            try Posix.check(status)
            guard result != nil, let name = passwd.pw_name else { return nil }
            return String(cString: name)
        }
    }

    /// The groups user `name` belongs to per the database, its primary group `gid` included.
    package static func groupIDs(ofUser name: String, primaryGroup gid: gid_t) -> [gid_t] {
        var count: CInt = 64
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let wanted = count
            if getgrouplist(name, gid, &groups, &count) >= 0 {
                return Array(groups.prefix(Int(count)))
            }
            // Too few slots: `count` now says how many are needed.
            if count <= wanted { count = wanted * 2 }
        }
    }
}
