import Foundation
import StopwatchProtocol
import Testing
import Varlink

/// `swctl` against the real daemon: every command, the output forms and the exit statuses.
@Suite("swctl end to end")
struct SwctlEndToEndTests {
    let directory: TestDirectory
    let daemon: DaemonProcess

    init() throws {
        directory = try TestDirectory()
        daemon = try DaemonProcess(socket: directory.socket)
    }

    func swctl(_ arguments: String...) throws -> Swctl {
        try Swctl.run(arguments, socket: daemon.socket)
    }

    @Test("every command, with the human output")
    func commands() throws {
        var result = try swctl("start")
        #expect(result.status == 0)
        #expect(result.lines.count == 1 && result.lines[0].wholeMatch(of: /default counting \d+:\d\d:\d\d/) != nil)
        // Shapes, not clock values: a loaded machine may take seconds between two commands.
        result = try swctl("lap")
        #expect(result.status == 0 && result.lines.first?.wholeMatch(of: /default counting \d+:\d\d:\d\d \(1 lap\)/) != nil)
        #expect(result.lines.count == 2 && result.lines[1].wholeMatch(of: /\ \ lap 1  \d+:\d\d:\d\d  \(\+\d+:\d\d:\d\d\)/) != nil)
        #expect(try swctl("stop").lines.first?.wholeMatch(of: /default paused \d+:\d\d:\d\d \(1 lap\)/) != nil)
        #expect(try swctl("status").lines.first?.hasPrefix("default paused") == true)
        #expect(try swctl("toggle").lines.first?.hasPrefix("default counting") == true)
        #expect(try swctl("toggle", "default").lines.first?.hasPrefix("default paused") == true)
        #expect(try swctl("reset").lines == ["default stopped 0:00:00"])
        #expect(try swctl("start", "tea").status == 0)
        let list = try swctl("list")
        #expect(list.lines.count == 3 && list.lines[0].hasPrefix("NAME"))
        #expect(list.lines[1].hasPrefix("default") && list.lines[2].hasPrefix("tea"))
        #expect(try swctl("remove", "tea").status == 0)
        #expect(try swctl("list").lines.count == 2)
    }

    @Test("--json prints the Stopwatch object; list --json an array")
    func json() throws {
        let started = try swctl("--json", "start", "j")
        let stopwatch = try Stopwatch(json: try JSONParser.parse(started.output.trimmingCharacters(in: .newlines)))
        #expect(stopwatch.name == "j" && stopwatch.state == .counting)
        let list = try swctl("list", "--json")
        guard case .array(let items) = try JSONParser.parse(list.output.trimmingCharacters(in: .newlines)) else {
            Issue.record("not an array: \(list.output)")
            return
        }
        #expect(try items.map { try Stopwatch(json: $0).name } == ["j"])
    }

    @Test("exit 1 and a one-line hint when the daemon refuses (reset while counting)")
    func refused() throws {
        _ = try swctl("start")
        let reset = try swctl("reset")
        #expect(reset.status == 1)
        #expect(reset.error == "swctl: cannot reset 'default' while it is counting; stop it first ('swctl stop default')\n")
        _ = try swctl("start", "idle")
        _ = try swctl("stop", "idle")
        let lap = try swctl("lap", "idle")
        #expect(lap.status == 1)
        #expect(lap.error.contains("not counting"))
    }

    @Test("a typo is told: stop, reset, lap and remove of a name never created exit 1, one line naming it, pointing at swctl list, and a close name",
          arguments: ["stop", "reset", "lap", "remove"])
    func noSuchStopwatch(command: String) throws {
        _ = try swctl("start", "coffee")
        _ = try swctl("start", "Tea")
        for (name, message) in [
            ("tae", "swctl: there is no stopwatch 'tae' (see 'swctl list'); did you mean 'Tea'?\n"),
            ("tea", "swctl: there is no stopwatch 'tea' (see 'swctl list'); did you mean 'Tea'?\n"),
            ("cofee", "swctl: there is no stopwatch 'cofee' (see 'swctl list'); did you mean 'coffee'?\n"),
            ("milk", "swctl: there is no stopwatch 'milk' (see 'swctl list')\n"),
        ] {
            let result = try swctl(command, name)
            #expect(result.status == 1, "\(command) \(name)")
            #expect(result.error == message && result.output.isEmpty)
        }
        if command != "remove" {
            #expect(try swctl(command).error == "swctl: there is no stopwatch 'default' (see 'swctl list'); 'swctl start' makes it\n")
        }
        // Nothing was made of them; status still reads a missing name as new, toggle makes one.
        #expect(try swctl("list").lines.map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["NAME", "Tea", "coffee"])
        #expect(try swctl("status", "milk").lines == ["milk stopped 0:00:00"])
        #expect(try swctl("toggle", "milk").status == 0)
        #expect(try swctl("stop", "milk").status == 0)
    }

    @Test("exit 2 on usage errors, with what to do", arguments: [
        ["frobnicate"], [], ["start", "a", "b"], ["start", "bad/name"], ["remove"], ["--socket"],
        ["list", "x"], ["status", "--format", "waybar"], ["watch", "--format", "{nope}"], ["--user", "--system", "list"],
    ])
    func usage(arguments: [String]) throws {
        let result = try Swctl.run(arguments, socket: daemon.socket)
        #expect(result.status == 2)
        #expect(result.error.hasPrefix("swctl: "))
        #expect(result.error.split(separator: "\n").count <= 2)
        #expect(result.output.isEmpty)
    }

    @Test("exit 69 when no daemon answers, saying how to start one")
    func unreachable() throws {
        let result = try Swctl.run(["status"], socket: directory.file("none.sock"))
        #expect(result.status == 69)
        #expect(result.error.contains("start one with"))
        // Run from a checkout's .build (or a scratch path beside it, as under a sanitizer), as
        // here: the daemon is not on the PATH, 'swift run' starts it.
        #expect(Binaries.swctl.split(separator: "/").contains { $0 == ".build" || $0.hasPrefix(".build-") }, "\(Binaries.swctl)")
        #expect(result.error.contains("start one with 'swift run stopwatchd' in another terminal of this checkout"), "\(result.error)")
    }

    @Test("--help and --version exit 0")
    func helpAndVersion() throws {
        let help = try swctl("--help")
        #expect(help.status == 0 && help.output.contains("usage: swctl"))
        #expect(try swctl("--version").output == "swctl \(Version.number)\n")
        #expect(try Swctl.run(["--help"], socket: nil).status == 0)
    }

    @Test("no options at all: $STOPWATCHD_SOCKET is used by daemon and client alike")
    func noOptions() throws {
        let directory = try TestDirectory()
        let environment = ["STOPWATCHD_SOCKET": directory.socket]
        let daemon = try DaemonProcess(socket: directory.socket, environment: environment, passSocket: false)
        #expect(daemon.isRunning)
        #expect(try Swctl.run(["start"], socket: nil, environment: environment).status == 0)
        #expect(try Swctl.run(["status"], socket: nil, environment: environment).lines.first?.hasPrefix("default counting") == true)
    }
}
