import Glibc
import LinuxSystem

/// The processes of the machine, as /proc lists them.
enum ProcessTable {
    /// The processes with `argument` among their command-line arguments (a zombie's command
    /// line is empty: only live processes count).
    static func processes(withArgument argument: String) -> [pid_t] {
        let wanted = Array(argument.utf8)
        return ((try? FileSystem.entries(of: "/proc")) ?? []).compactMap { pid_t($0) }.filter { pid in
            guard let bytes = try? FileSystem.contents(of: "/proc/\(pid)/cmdline", limit: 1 << 20) else { return false }
            return bytes.split(separator: 0, omittingEmptySubsequences: false).contains { $0.elementsEqual(wanted) }
        }
    }
}
