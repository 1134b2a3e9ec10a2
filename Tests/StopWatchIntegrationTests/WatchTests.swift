import Foundation
import StopwatchProtocol
import StopwatchdClient
import Testing
import Varlink

/// `swctl watch`: streaming, formats, and surviving a daemon restart.
@Suite("swctl watch")
struct WatchTests {
    @Test("a watch left running by a bar that went away exits, though it has nothing to write")
    func exitsWhenNobodyReads() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let watch = try SwctlProcess(["watch", "idle", "--format", "waybar"], socket: daemon.socket)
        #expect(watch.lines.next() != nil, "the first line")
        // Stopped: no tick, no update, so nothing for a write to fail on.
        watch.child.closeOutput()
        #expect(watch.child.wait(timeout: .seconds(30)) == .exited(0))
    }

    @Test(
        "with no socket chosen, a watch finds a user daemon that starts after it",
        .disabled(if: FileManager.default.fileExists(atPath: "/run/stopwatchd/stopwatchd.sock"), "a system daemon runs here")
    )
    func findsLaterUserDaemon() throws {
        let directory = try TestDirectory()
        let child = try ChildProcess(
            Binaries.swctl, ["watch", "late", "--format", "i3blocks"],
            environment: Binaries.childEnvironment.merging(["XDG_RUNTIME_DIR": directory.path]) { $1 },
            captureOutput: true
        )
        let lines = LineReader(child.output!)
        #expect(lines.next() == "--:--:--", "unavailable while no daemon runs")
        let daemon = try DaemonProcess(socket: directory.path + "/stopwatchd/stopwatchd.sock")
        #expect(lines.next(timeout: .seconds(60)) == "0:00:00 stopped", "the stopwatch, once the user daemon runs")
        withExtendedLifetime(daemon) {}
    }

    @Test("streams each tick as one line, in every format")
    func formats() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "50ms"])
        _ = try StopwatchClient(socketPath: daemon.socket).start("w")
        let expectations: [(format: String, check: (String) throws -> Bool)] = [
            ("plain", { $0.hasPrefix("w counting 0:00:0") }),
            ("json", { try Stopwatch(json: JSONParser.parse($0)).state == .counting }),
            ("waybar", { line in
                guard case .object(let object) = try JSONParser.parse(line) else { return false }
                return object.keys == ["text", "tooltip", "class"] && object["class"] == .string("counting")
            }),
            ("i3blocks", { $0.hasPrefix("0:00:0") && !$0.contains(" ") }),
            ("polybar", { $0.hasPrefix("0:00:0") && !$0.contains(" ") }),
            ("{name}|{state}|{elapsed_ms}", { $0.hasPrefix("w|counting|") }),
        ]
        for (format, check) in expectations {
            let watch = try SwctlProcess(["watch", "w", "--format", format], socket: daemon.socket)
            var lines: [String] = []
            while lines.count < 4, let line = watch.lines.next() { lines.append(line) }
            #expect(lines.count == 4, "format \(format)")
            for line in lines { #expect(try check(line), "format \(format): \(line)") }
        }
    }

    @Test("tenths appear once the ticks come faster than once a second")
    func tenths() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "100ms"])
        _ = try StopwatchClient(socketPath: daemon.socket).start()
        let watch = try SwctlProcess(["watch", "--format", "{elapsed}"], socket: daemon.socket)
        #expect(watch.lines.next(where: { $0.wholeMatch(of: /0:00:0\d\.\d/) != nil }) != nil)
    }

    @Test("says the daemon is unavailable, in its format, and reconnects when it is back")
    func reconnects() throws {
        let directory = try TestDirectory()
        var daemon: DaemonProcess? = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "50ms"])
        _ = try StopwatchClient(socketPath: directory.socket).start()
        let watch = try SwctlProcess(["watch", "--format", "waybar"], socket: directory.socket)
        #expect(watch.lines.next(where: { $0.contains(#""class":"counting""#) }) != nil)

        #expect(daemon?.stop(SIGTERM) == 0)
        daemon = nil
        let unavailable = try #require(watch.lines.next(where: { $0.contains("unavailable") }))
        guard case .object(let object) = try JSONParser.parse(unavailable) else {
            Issue.record("not a waybar line: \(unavailable)")
            return
        }
        #expect(object["class"] == .string("unavailable"))

        daemon = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "50ms"])
        _ = try StopwatchClient(socketPath: directory.socket).start("back")
        #expect(watch.lines.next(where: { $0.contains(#""class":"#) && !$0.contains("unavailable") }) != nil)
        #expect(watch.isRunning)
    }
}
