import Glibc
import LinuxSystem

/// A directory under /tmp that swbench keeps its sockets, state and logs in, removed at the
/// end of the run.
struct TemporaryDirectory {
    let path: String

    init() throws(Errno) {
        var template = Array("/tmp/swbench.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        path = String(cString: made)
    }

    /// A new directory `name` inside this one.
    func subdirectory(_ name: String) throws(Errno) -> String {
        let subdirectory = "\(path)/\(name)"
        try FileSystem.makeDirectories(subdirectory, mode: 0o700)
        return subdirectory
    }

    /// Removes the directory and everything in it.
    func remove() {
        Self.removeTree(path)
    }

    private static func removeTree(_ path: String) {
        if (try? FileSystem.kind(at: path)) == .directory {
            for entry in (try? FileSystem.entries(of: path)) ?? [] { removeTree("\(path)/\(entry)") }
            rmdir(path)
        } else {
            try? FileSystem.remove(path)
        }
    }
}
