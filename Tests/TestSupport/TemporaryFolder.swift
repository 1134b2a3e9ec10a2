import Glibc
import LinuxSystem

/// A private temporary folder for a test (`mkdtemp`, 0700), removed with everything in it
/// when the test lets go of it.
package final class TemporaryFolder: Sendable {
    package let path: String

    /// `/tmp/PREFIX-XXXXXX`.
    package init(prefix: String) throws(Errno) {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno.current }
        path = String(cString: made)
    }

    deinit {
        Self.removeTree(path)
    }

    /// Removes `path` and, for a directory, all in it; links are removed, never followed.
    package static func removeTree(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        if status.st_mode & S_IFMT == S_IFDIR {
            for name in (try? FileSystem.entries(of: path)) ?? [] { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
