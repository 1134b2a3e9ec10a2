import LinuxSystem
import StopwatchProtocol
import StopwatchdClient
import Testing
import Varlink

@Suite("command lines, names, durations, socket paths")
struct CommandLineTests {
    @Test("durations", arguments: [
        ("250ms", Duration.milliseconds(250)), ("1s", .seconds(1)), ("1.5s", .milliseconds(1500)),
        ("2m", .seconds(120)), ("1h", .seconds(3600)), ("0.01s", .milliseconds(10)),
        ("5min", .seconds(300)), ("1.5min", .seconds(90)),
        // Days, and compounds from the largest unit down, everywhere (SPEC §5).
        ("2d", .seconds(172_800)), ("1.5d", .seconds(129_600)), ("1d12h", .seconds(129_600)), ("1h30m", .seconds(5400)),
        ("2m30s", .seconds(150)), ("1h30min", .seconds(5400)), ("1s500ms", .milliseconds(1500)),
    ])
    func durations(text: String, expected: Duration) {
        #expect(DurationText.parse(text) == expected)
    }

    @Test("durations written back in their largest whole unit, and read back", arguments: [
        (Duration.milliseconds(250), "250ms"), (.seconds(0), "0s"), (.seconds(90), "90s"), (.seconds(120), "2m"),
        (.seconds(5400), "90m"), (.seconds(3600), "1h"), (.seconds(24 * 3600), "24h"),
    ])
    func durationStrings(duration: Duration, expected: String) {
        #expect(DurationText.string(duration) == expected)
        #expect(DurationText.parse(expected) == duration)
    }

    @Test("not durations", arguments: ["", "1", "s", "ms", "-1s", "1e3s", "inf s", "nans", "1..5s", ".s", "1 s", "9999999999h", "min", "5mins", "5 min", "5mn", "d", "1dd", "-2d", "30m1h", "1m1m", "12h1d", "1h30", "1h 30m"])
    func notDurations(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test("names", arguments: [
        ("default", true), ("a", true), ("A9._-x", true), (String(repeating: "x", count: 64), true),
        ("client call", true), ("café", true), ("cafe\u{301}", true), ("タイマー", true), ("-lead", true),
        (".hidden", true), ("...", true), ("a\\b \"q\" <&> %{F#f00} {elapsed}", true), ("😀", true),
        (String(repeating: "😀", count: 64), true), ("mid\u{00A0}dle", true),
        ("", false), (String(repeating: "x", count: 65), false), (String(repeating: "😀", count: 65), false),
        (".", false), ("..", false), ("a/b", false), ("/", false), ("tab\t", false), ("a\u{0}", false),
        ("a\u{1B}[2J", false), ("del\u{7F}", false), ("nel\u{85}", false), ("c1\u{9F}", false),
        (" lead", false), ("trail ", false), ("\u{A0}nbsp", false), ("nbsp\u{A0}", false), ("ideo\u{3000}", false),
        ("line\u{2028}", false), (" ", false),
    ])
    func names(name: String, valid: Bool) {
        #expect(StopwatchName.isValid(name) == valid)
    }

    @Test("the ASCII fast path of names agrees with the rule read scalar by scalar")
    func asciiNames() {
        // Every name of one or two ASCII characters, and some longer ones around the limits.
        let characters = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
        var names = characters + characters.flatMap { first in characters.map { first + $0 } }
        names += ["", " a ", "a b", "a/", ".a", "..a", "...", String(repeating: "y", count: 64), String(repeating: "y", count: 65), "x\u{7F}", "é"]
        for name in names {
            #expect(StopwatchName.isValid(name) == StopwatchName.isValidByScalars(name), "\(Array(name.utf8))")
            if let verdict = StopwatchName.asciiVerdict(name) {
                #expect(verdict == StopwatchName.isValidByScalars(name), "\(Array(name.utf8))")
            }
        }
        // The fast path takes printable ASCII only.
        #expect(StopwatchName.asciiVerdict("é") == nil)
        #expect(StopwatchName.asciiVerdict("a\u{1}") == nil)
        #expect(StopwatchName.asciiVerdict("bench") == true)
    }

    @Test("names as keys: equal only byte for byte, whatever their storage; ordered by bytes")
    func stopwatchKeys() {
        let long = String(repeating: "x", count: 40)
        // Built apart, so that neither shares the other's storage.
        #expect(StopwatchKey(long + "é") == StopwatchKey(String(decoding: Array((long + "é").utf8), as: UTF8.self)))
        #expect(StopwatchKey(long + "a") != StopwatchKey(long + "b"))
        #expect(StopwatchKey("tea") != StopwatchKey("teas"))
        #expect(StopwatchKey("") == StopwatchKey(""))
        #expect(StopwatchKey("café") != StopwatchKey("cafe\u{301}"))
        #expect(Set([StopwatchKey("café"), StopwatchKey("cafe\u{301}"), StopwatchKey(String("café"))]).count == 2)
        #expect(StopwatchKey("B") < StopwatchKey("a") && StopwatchKey("tea") < StopwatchKey("teas"))
    }

    @Test("an invalid name is shown with its control characters escaped")
    func invalidNameMessage() {
        let message = StopwatchName.invalidNameMessage("a\u{1B}[2J\nb")
        #expect(message.hasPrefix(#"'a\u{1B}[2J\u{A}b' is not a valid name"#))
        #expect(!message.unicodeScalars.contains(where: StopwatchName.isControl))
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
        // Gone in mid-answer: unavailable, as no daemon is; not a protocol error.
        #expect(ClientError.connectionClosed(path: "/s", reason: "gone").exitStatus == 69)
        #expect(ClientError.permissionDenied(path: "/s").exitStatus == 77)
        #expect(ClientError.protocolViolation("x").exitStatus == 70)
        #expect(ClientError(refusal: .permissionDenied).exitStatus == 77)
        #expect(ClientError(refusal: .protocolError("bad")).exitStatus == 70)
        #expect(ClientError(refusal: .methodNotFound("x.Y")).exitStatus == 70)
        #expect(ClientError(refusal: .invalidName("a/b")).exitStatus == 1)
        #expect(ClientError(refusal: .tooManyStopwatches(limit: 3)).exitStatus == 1)
        // What a user of the library sees: the error's name, no varlink types.
        #expect(ClientError(refusal: .expectedMore).exitStatus == 70)
        #expect(ClientError.refused(errorName: "io.stopwatchd.ProtocolError", explanation: "").exitStatus == 70)
        #expect(ClientError.refused(errorName: "io.stopwatchd.TooManyLaps", explanation: "").exitStatus == 1)
    }

    @Test("a refusal keeps the daemon's error name and says what to do")
    func refusals() {
        let stopwatch = Stopwatch(name: "tea", state: .counting, elapsedMs: 1)
        let reset = ClientError(refusal: .invalidTransition(stopwatch, method: "Reset"))
        #expect(reset == .refused(errorName: "io.stopwatchd.InvalidTransition", explanation: reset.description))
        #expect(reset.description == "cannot reset 'tea' while it is counting; stop it first ('swctl stop tea')")
        #expect(ClientError(refusal: .invalidName("a/b")).description == StopwatchName.invalidNameMessage("a/b"))
        #expect(ClientError(refusal: .tooManyStopwatches(limit: 3)).description.hasPrefix("the daemon already keeps 3 stopwatches"))
        #expect(ClientError(refusal: .methodNotFound("x.Y")).description == #"stopwatchd refused the call: org.varlink.service.MethodNotFound {"method":"x.Y"}"#)
        // A method of this release that an older daemon lacks: said as such (still exit 70).
        #expect(ClientError(refusal: .methodNotFound("io.stopwatchd.Undo")).description == "this stopwatchd is too old for Undo; upgrade it")
        #expect(ClientError(refusal: .methodNotFound("io.stopwatchd.Undo")).exitStatus == 70)
        // A ProtocolError is the daemon's last word before it closes the connection: its
        // reason is the message (a month of the history the daemon cannot read).
        let unreadable = ClientError(refusal: .protocolError("cannot read the history's 2025-02.jsonl (Input/output error)"))
        #expect(unreadable.description == "stopwatchd could not answer and closed the connection: cannot read the history's 2025-02.jsonl (Input/output error)")
        #expect(unreadable.exitStatus == 70)
        #expect(ClientError.connectionClosed(path: "/s", reason: "Connection reset by peer").description.hasPrefix(
            "the connection to stopwatchd at /s ended before the answer was complete (Connection reset by peer); "))
        // A daemon at its connection limit is unreachable for now, not a refusal.
        #expect(ClientError.reply(.tooManyConnections(limit: 2), unreachable: { .unreachable(path: "/s", reason: $0) }).exitStatus == 69)
    }

    @Test("the ssh command line")
    func sshCommandLine() {
        #expect(StopwatchClient.sshBridge(host: "me@desk") == .bridge(["ssh", "-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3", "--", "me@desk", "swctl", "bridge"]))
        #expect(StopwatchClient.sshBridge(host: "desk", ssh: ["ssh", "-p", "2222"])
            == .bridge(["ssh", "-p", "2222", "-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3", "--", "desk", "swctl", "bridge"]))
        #expect(StopwatchClient.sshBridge(host: "desk").description == "ssh -T -o BatchMode=yes -o ServerAliveInterval=10 -o ServerAliveCountMax=3 -- desk swctl bridge")
        // A host that looks like an option stays the host: after "--", ssh parses no option.
        let hostile = StopwatchClient.sshBridge(host: "-oProxyCommand=touch /tmp/owned")
        #expect(hostile == .bridge(["ssh", "-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3", "--", "-oProxyCommand=touch /tmp/owned", "swctl", "bridge"]))
        #expect(StopwatchClient.Endpoint.socket("/s").description == "/s")
        #expect(StopwatchClient(socketPath: "/s").endpoint == .socket("/s"))
    }

    @Test("bridgeFailed: exit 69, one line that quotes the command and ssh's words")
    func bridgeFailed() {
        let error = ClientError.bridgeFailed(command: "ssh -T -o BatchMode=yes -o ServerAliveInterval=10 -o ServerAliveCountMax=3 -- desk swctl bridge", reason: "ssh: Could not resolve hostname desk")
        #expect(error.exitStatus == 69)
        #expect(error.description.hasPrefix("cannot reach stopwatchd through 'ssh -T -o BatchMode=yes -o ServerAliveInterval=10 -o ServerAliveCountMax=3 -- desk swctl bridge': ssh: Could not resolve hostname desk; "))
        #expect(!error.description.contains("\n"))
    }
}
