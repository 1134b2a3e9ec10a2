import Foundation
import StopWatchCore
import StopwatchProtocol
import StopwatchdClient
import Testing
import Varlink

/// A standard varlink client works unchanged: the Python `varlink` package's CLI.
/// CI installs it and sets STOPWATCHD_REQUIRE_PYTHON_VARLINK=1 so that a missing package
/// fails instead of skipping.
@Suite("standard varlink clients")
struct InteropTests {
    static var pythonVarlink: Bool {
        guard let check = try? ChildProcess("/usr/bin/env", ["python3", "-c", "import varlink"], environment: ProcessInfo.processInfo.environment) else {
            return false
        }
        return check.wait() == .exited(0)
    }

    static var enabled: Bool {
        pythonVarlink || ProcessInfo.processInfo.environment["STOPWATCHD_REQUIRE_PYTHON_VARLINK"] == "1"
    }

    func python(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try ChildProcess.run("/usr/bin/env", ["python3", "-m", "varlink.cli"] + arguments, environment: ProcessInfo.processInfo.environment)
        return (result.status, result.output + result.error)
    }

    @Test("python3 -m varlink.cli: info, help (parses our IDL), call Start and Get",
          .enabled(if: enabled, "the Python varlink package is not installed (python3 -m pip install varlink, in a venv)"))
    func pythonCLI() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let address = "unix:\(daemon.socket)"

        let info = try python(["info", address])
        #expect(info.status == 0, "\(info.output)")
        #expect(info.output.contains("io.stopwatchd"))

        let help = try python(["help", "\(address)/io.stopwatchd"])
        #expect(help.status == 0, "\(help.output)")
        #expect(help.output.contains("method Watch"))

        let start = try python(["call", "\(address)/io.stopwatchd.Start", #"{"name":"py"}"#])
        #expect(start.status == 0, "\(start.output)")
        let started = try Stopwatch(json: try #require(try objectIn(start.output)["stopwatch"]))
        #expect(started.name == "py" && started.state == .counting)

        #expect(try StopwatchClient(socketPath: daemon.socket).get("py").state == .counting)

        // The CLI prints an error reply (and exits 0 regardless: its own choice).
        let refused = try python(["call", "\(address)/io.stopwatchd.Reset", #"{"name":"py"}"#])
        #expect(refused.output.contains("io.stopwatchd.InvalidTransition"))
    }

    @Test("python3 -m varlink.cli: Countdown and SetTarget, and their InvalidParameter",
          .enabled(if: enabled, "the Python varlink package is not installed (python3 -m pip install varlink, in a venv)"))
    func pythonCountdowns() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let address = "unix:\(daemon.socket)"

        let countdown = try python(["call", "\(address)/io.stopwatchd.Countdown", #"{"name":"tea","target_ms":240000}"#])
        #expect(countdown.status == 0, "\(countdown.output)")
        let tea = try Stopwatch(json: try #require(try objectIn(countdown.output)["stopwatch"]))
        #expect(tea.name == "tea" && tea.state == .counting && tea.targetMs == 240_000)

        let reminder = try python(["call", "\(address)/io.stopwatchd.SetTarget", #"{"name":"work","target_ms":7200000}"#])
        #expect(reminder.status == 0, "\(reminder.output)")
        #expect(try Stopwatch(json: try #require(try objectIn(reminder.output)["stopwatch"])).targetMs == 7_200_000)
        let plain = try python(["call", "\(address)/io.stopwatchd.SetTarget", #"{"name":"work","target_ms":null}"#])
        #expect(try Stopwatch(json: try #require(try objectIn(plain.output)["stopwatch"])).targetMs == nil, "\(plain.output)")

        #expect(try StopwatchClient(socketPath: daemon.socket).get("tea").targetMs == 240_000)
        let refused = try python(["call", "\(address)/io.stopwatchd.Countdown", #"{"name":"tea","target_ms":0}"#])
        #expect(refused.output.contains("org.varlink.service.InvalidParameter"), "\(refused.output)")
    }

    @Test("python3 -m varlink.cli: Track, Amend and Undo, and Undo's NothingToUndo",
          .enabled(if: enabled, "the Python varlink package is not installed (python3 -m pip install varlink, in a venv)"))
    func pythonCorrections() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let address = "unix:\(daemon.socket)"
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let start = now - 3 * 3_600_000, end = now - 2 * 3_600_000

        let track = try python(["call", "\(address)/io.stopwatchd.Track", #"{"name":"py","start_ms":\#(start),"end_ms":\#(end),"note":"from python"}"#])
        #expect(track.status == 0, "\(track.output)")
        let tracked = try Interval(json: try #require(try objectIn(track.output)["interval"]))
        #expect(tracked.name == "py" && tracked.elapsedMs == 3_600_000 && tracked.note == "from python", "\(tracked)")
        #expect(IntervalID.isValid(tracked.id), "\(tracked.id)")

        // By a prefix of its id, as a person would copy it from `swctl log`.
        let prefix = String(tracked.id.prefix(8))
        let amend = try python(["call", "\(address)/io.stopwatchd.Amend", #"{"id":"\#(prefix)","end_ms":\#(end + 1_800_000)}"#])
        #expect(amend.status == 0, "\(amend.output)")
        let amended = try Interval(json: try #require(try objectIn(amend.output)["interval"]))
        #expect(amended.id == tracked.id && amended.elapsedMs == 5_400_000 && amended.note == "from python", "\(amended)")

        let undo = try python(["call", "\(address)/io.stopwatchd.Undo", "{}"])
        let undoReply = try objectIn(undo.output)
        #expect(undoReply["undone"] == .string("amend"), "\(undo.output)")
        #expect(try Interval(json: try #require(undoReply["interval"])).elapsedMs == 3_600_000, "\(undo.output)")
        let undoTrack = try python(["call", "\(address)/io.stopwatchd.Undo", "{}"])
        #expect(try objectIn(undoTrack.output)["undone"] == .string("track"), "\(undoTrack.output)")
        let nothing = try python(["call", "\(address)/io.stopwatchd.Undo", "{}"])
        #expect(nothing.output.contains("io.stopwatchd.NothingToUndo"), "\(nothing.output)")
    }

    /// The JSON object in the CLI's (pretty-printed) output.
    func objectIn(_ output: String) throws -> JSONObject {
        let start = try #require(output.firstIndex(of: "{"))
        let end = try #require(output.lastIndex(of: "}"))
        guard case .object(let object) = try JSONParser.parse(String(output[start...end])) else {
            throw MalformedMessage("not an object: \(output)")
        }
        return object
    }
}
