import LinuxSystem
import StopwatchProtocol

/// Where `--host` and `$STOPWATCHD_HOST` send the calls: to the daemon on another machine,
/// through `ssh HOST swctl bridge` (`StopwatchClient.sshBridge`), whose other end is `Bridge`.
extension SwctlInvocation {
    /// The host whose daemon this invocation drives through ssh: `--host`, else
    /// `$STOPWATCHD_HOST` unless a socket option was given (`--socket`, `--user`, `--system`
    /// beat the variable, and the variable beats `$STOPWATCHD_SOCKET`); nil for a socket
    /// here. `bridge` always relays to a socket here. Throws for a variable that is not a
    /// host.
    package func remoteHost(environment: ProcessEnvironment) throws(UsageError) -> String? {
        if case .bridge = command { return nil }
        if let host { return host }
        guard socket == .automatic, let variable = environment["STOPWATCHD_HOST"] else { return nil }
        try Self.checkHost(variable, from: "STOPWATCHD_HOST")
        return variable
    }

    /// The command that replaces `ssh`: `$STOPWATCHD_SSH` split on whitespace (no shell:
    /// no quotes, no expansions), else `ssh`.
    package static func sshCommand(environment: ProcessEnvironment) -> [String] {
        let words = (environment["STOPWATCHD_SSH"] ?? "").split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
        return words.isEmpty ? ["ssh"] : words.map(String.init)
    }

    /// A host for ssh: not empty, no whitespace or control characters, and not an option
    /// (`-oProxyCommand=…` would be one to ssh).
    static func checkHost(_ host: String, from source: String) throws(UsageError) {
        guard !host.isEmpty, !host.hasPrefix("-"),
              !host.unicodeScalars.contains(where: { $0 == " " || StopwatchName.isControl($0) }) else {
            throw UsageError("\(source) takes [USER@]HOST, not '\(StopwatchName.printable(host))'")
        }
    }
}
