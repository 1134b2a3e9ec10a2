import LinuxSystem
import StopwatchProtocol
import StopwatchdClient
import Testing
@testable import swctl

@Suite("command lines, names, durations, socket paths")
struct CommandLineTests {
    @Test("durations", arguments: [
        ("250ms", Duration.milliseconds(250)), ("1s", .seconds(1)), ("1.5s", .milliseconds(1500)),
        ("2m", .seconds(120)), ("1h", .seconds(3600)), ("0.01s", .milliseconds(10)),
    ])
    func durations(text: String, expected: Duration) {
        #expect(DurationText.parse(text) == expected)
    }

    @Test("not durations", arguments: ["", "1", "s", "ms", "-1s", "1e3s", "inf s", "nans", "1..5s", ".s", "1 s", "9999999999h"])
    func notDurations(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test("names", arguments: [
        ("default", true), ("a", true), ("A9._-x", true), (String(repeating: "x", count: 64), true),
        ("", false), (String(repeating: "x", count: 65), false), ("-lead", false), (".hidden", false),
        ("..", false), ("a/b", false), ("a b", false), ("tab\t", false), ("é", false), ("a\u{0}", false),
    ])
    func names(name: String, valid: Bool) {
        #expect(StopwatchName.isValid(name) == valid)
    }

    @Test("swctl command lines")
    func swctl() throws {
        #expect(try SwctlInvocation.parse(["start"]) == .run(SwctlInvocation(command: .start, name: nil)))
        var watch = SwctlInvocation(command: .watch, name: "tea")
        watch.format = .waybar
        watch.socket = .user
        #expect(try SwctlInvocation.parse(["--user", "watch", "tea", "--format=waybar"]) == .run(watch))
        var json = SwctlInvocation(command: .status, name: nil)
        json.json = true
        json.format = .json
        json.socket = .path("/s")
        #expect(try SwctlInvocation.parse(["status", "--json", "--socket", "/s"]) == .run(json))
        #expect(throws: UsageError.self) { try SwctlInvocation.parse(["remove"]) }
        #expect(throws: UsageError.self) { try SwctlInvocation.parse(["--system", "--user", "list"]) }
    }

    @Test("the client's socket: explicit option > $STOPWATCHD_SOCKET > user socket if present > system")
    func clientSocket() {
        let environment = ProcessEnvironment(["XDG_RUNTIME_DIR": "/run/user/7", "STOPWATCHD_SOCKET": "/env.sock"])
        let plain = ProcessEnvironment(["XDG_RUNTIME_DIR": "/run/user/7"])
        let userSocket = "/run/user/7/stopwatchd/stopwatchd.sock"
        #expect(SocketLocation.clientPath(.path("/x"), environment: environment) == "/x")
        #expect(SocketLocation.clientPath(.user, environment: environment) == userSocket)
        #expect(SocketLocation.clientPath(.system, environment: environment) == SocketLocation.systemPath)
        #expect(SocketLocation.clientPath(.automatic, environment: environment) == "/env.sock")
        #expect(SocketLocation.clientPath(.automatic, environment: plain, exists: { $0 == userSocket }) == userSocket)
        #expect(SocketLocation.clientPath(.automatic, environment: plain, exists: { _ in false }) == SocketLocation.systemPath)
        #expect(SocketLocation.clientPath(.user, environment: ProcessEnvironment([:])) == nil)
        #expect(SocketLocation.defaultDaemonPath(environment: plain, isRoot: false) == userSocket)
        #expect(SocketLocation.defaultDaemonPath(environment: plain, isRoot: true) == SocketLocation.systemPath)
    }

    @Test("client exit statuses follow SPEC §5")
    func exitStatuses() {
        #expect(ClientError.unreachable(path: "/s", reason: "gone").exitStatus == 69)
        #expect(ClientError.permissionDenied(path: "/s").exitStatus == 77)
        #expect(ClientError.protocolViolation("x").exitStatus == 70)
        #expect(ClientError.refused(.permissionDenied).exitStatus == 77)
        #expect(ClientError.refused(.protocolError("bad")).exitStatus == 70)
        #expect(ClientError.refused(.methodNotFound("x.Y")).exitStatus == 70)
        #expect(ClientError.refused(.invalidName("a/b")).exitStatus == 1)
        #expect(ClientError.refused(.tooManyStopwatches(limit: 3)).exitStatus == 1)
    }
}
