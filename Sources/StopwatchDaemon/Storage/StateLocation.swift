import LinuxSystem

/// Where the daemon keeps its stopwatches (SPEC §4): `--state-dir` > `$STATE_DIRECTORY`
/// (set by systemd's `StateDirectory=`) > `$XDG_STATE_HOME/stopwatchd` (default
/// `~/.local/state/stopwatchd`) for a non-root user > `/var/lib/stopwatchd`.
package enum StateLocation {
    package static let systemPath = "/var/lib/stopwatchd"

    package static func path(option: String?, environment: ProcessEnvironment, isRoot: Bool) -> String {
        if let option { return option }
        // systemd lists one directory per StateDirectory= entry, separated by colons.
        if let fromSystemd = environment["STATE_DIRECTORY"]?.split(separator: ":").first {
            return String(fromSystemd)
        }
        if !isRoot {
            if let stateHome = environment["XDG_STATE_HOME"] { return "\(stateHome)/stopwatchd" }
            if let home = environment["HOME"] { return "\(home)/.local/state/stopwatchd" }
        }
        return systemPath
    }
}
