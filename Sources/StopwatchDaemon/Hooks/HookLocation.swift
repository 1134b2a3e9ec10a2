import LinuxSystem

/// Where the hooks are (SPEC §4): `--hook-dir` > `$XDG_CONFIG_HOME/stopwatchd/hooks`
/// (default `~/.config/stopwatchd/hooks`) for a non-root user > `/etc/stopwatchd/hooks`.
package enum HookLocation {
    package static let systemPath = "/etc/stopwatchd/hooks"

    package static func path(option: String?, environment: ProcessEnvironment, isRoot: Bool) -> String {
        if let option { return option }
        if !isRoot {
            if let configHome = environment["XDG_CONFIG_HOME"] { return "\(configHome)/stopwatchd/hooks" }
            if let home = environment["HOME"] { return "\(home)/.config/stopwatchd/hooks" }
        }
        return systemPath
    }
}
