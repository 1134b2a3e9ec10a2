import LinuxSystem
import StopwatchProtocol
import Testing
@testable import swctl

@Suite("--host, $STOPWATCHD_HOST, $STOPWATCHD_SSH, bridge")
struct RemoteCommandLineTests {
    private func invocation(_ arguments: [String]) throws -> SwctlInvocation {
        guard case .run(let invocation) = try SwctlInvocation.parse(arguments) else {
            Issue.record("\(arguments) is not a command")
            return SwctlInvocation(.status(name: nil))
        }
        return invocation
    }

    @Test("--host names the host; options before or after the command")
    func host() throws {
        #expect(try invocation(["--host", "desk", "start"]).host == "desk")
        #expect(try invocation(["status", "tea", "--host=me@desk"]).host == "me@desk")
        #expect(try invocation(["status"]).host == nil)
    }

    @Test("--host excludes the socket options, and takes a host", arguments: [
        ["--host", "desk", "--socket", "/s", "start"], ["--socket", "/s", "--host", "desk", "start"],
        ["--host", "desk", "--user", "list"], ["--system", "--host", "desk", "list"], ["--host", "a", "--host", "b", "list"],
        ["--host", "", "list"], ["--host", "-oProxyCommand=x", "list"], ["--host", "de sk", "list"], ["--host", "a\u{1B}b", "list"],
        ["--host"],
    ])
    func hostRefused(arguments: [String]) {
        #expect(throws: UsageError.self) { try SwctlInvocation.parse(arguments) }
    }

    @Test("bridge: no --host, no name, no --json; a socket option is fine")
    func bridge() throws {
        #expect(try invocation(["bridge"]).command == .bridge)
        #expect(try invocation(["--socket", "/s", "bridge"]).socket == .path("/s"))
        for arguments in [["--host", "desk", "bridge"], ["bridge", "--host", "desk"], ["bridge", "tea"], ["--json", "bridge"]] {
            #expect(throws: UsageError.self, "\(arguments)") { try SwctlInvocation.parse(arguments) }
        }
    }

    @Test("$STOPWATCHD_HOST: used without an option; --host and the socket options beat it; it beats $STOPWATCHD_SOCKET")
    func hostVariable() throws {
        let environment = ProcessEnvironment(["STOPWATCHD_HOST": "desk", "STOPWATCHD_SOCKET": "/here"])
        #expect(try invocation(["list"]).remoteHost(environment: environment) == "desk")
        #expect(try invocation(["--host", "lab", "list"]).remoteHost(environment: environment) == "lab")
        #expect(try invocation(["--socket", "/s", "list"]).remoteHost(environment: environment) == nil)
        #expect(try invocation(["--user", "list"]).remoteHost(environment: environment) == nil)
        #expect(try invocation(["--system", "list"]).remoteHost(environment: environment) == nil)
        #expect(try invocation(["list"]).remoteHost(environment: ProcessEnvironment([:])) == nil)
        #expect(try invocation(["list"]).remoteHost(environment: ProcessEnvironment(["STOPWATCHD_HOST": ""])) == nil)
        // bridge relays to this machine's daemon: on the remote side the variable may well be set.
        #expect(try invocation(["bridge"]).remoteHost(environment: environment) == nil)
        #expect(throws: UsageError.self) {
            try invocation(["list"]).remoteHost(environment: ProcessEnvironment(["STOPWATCHD_HOST": "-oProxyCommand=x"]))
        }
    }

    @Test("$STOPWATCHD_SSH is split on whitespace, with no shell; unset or blank is ssh")
    func sshVariable() {
        #expect(SwctlInvocation.sshCommand(environment: ProcessEnvironment([:])) == ["ssh"])
        #expect(SwctlInvocation.sshCommand(environment: ProcessEnvironment(["STOPWATCHD_SSH": " \t "])) == ["ssh"])
        #expect(SwctlInvocation.sshCommand(environment: ProcessEnvironment(["STOPWATCHD_SSH": "ssh -i ~/.ssh/k  -p\t2222"]))
            == ["ssh", "-i", "~/.ssh/k", "-p", "2222"])
        #expect(SwctlInvocation.sshCommand(environment: ProcessEnvironment(["STOPWATCHD_SSH": "ssh -o 'A B'"]))
            == ["ssh", "-o", "'A", "B'"])
    }
}
