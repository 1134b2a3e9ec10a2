import Foundation
import LinuxSystem
import StopwatchProtocol
import StopwatchdClient
import Testing
import Varlink

/// A cycle in the real daemon across a `kill -9`: the phases that ended while it was down
/// are told at its start, late, in order, each an interval of the history, and the right
/// phase runs.
@Suite("cycles across a kill")
struct CycleKillTests {
    let directory: TestDirectory
    var hooks: String { directory.path + "/hooks" }

    init() throws {
        directory = try TestDirectory()
        try FileManager.default.createDirectory(atPath: hooks, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        // One at a time, so the lines come in the order the events were told.
        let hook = hooks + "/record"
        try """
            #!/bin/sh
            echo "$STOPWATCHD_EVENT $STOPWATCHD_PHASE $STOPWATCHD_LATE_MS" >> \(directory.file("told"))
            """.write(toFile: hook, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hook)
    }

    func daemon() throws -> DaemonProcess {
        try DaemonProcess(socket: directory.socket, arguments: ["--hook-dir", hooks, "--max-hooks-running", "1"])
    }

    func told() -> [String] {
        ((try? String(contentsOfFile: directory.file("told"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test("kill -9 during a cycle, restarted after two phase ends: both told at start, late, in order; each phase an interval; the third phase runs")
    func killedAcrossTwoPhaseEnds() throws {
        var daemon = try daemon()
        let connection = try RawConnection(daemon.socket)
        // a is long enough that its start's hook has run before it ends, even under a
        // sanitizer on a loaded machine (CI once took most of a 2 s phase to run it, and
        // a ended before the kill).
        let asked = ContinuousClock.now
        try connection.call("io.stopwatchd.StartCycle", #"""
            {"name":"pomo","phases":[{"label":"a","target_ms":6000},{"label":"b","target_ms":2000},{"label":"c","target_ms":600000}],"auto":true}
            """#)
        let started = try #require(try connection.reply())
        #expect(started.stopwatch?.cycle?.phases.count == 3, "\(started)")
        let answered = ContinuousClock.now
        // Killed within a (the start's hook has run: the cycle is on disk), so that both
        // ends fall while it is down. a began after it was asked for: a kill less than 6 s
        // after the asking is before a's end.
        #expect(Deadline.wait { told() == ["start a "] }, "\(told())")
        // And marked started in the outbox (a `started` line, or the outbox cut once nothing
        // waits): killed between the hook's start and its mark, the restart runs it again
        // (RELIABILITY: a run being started at a crash may run twice), which CI once hit and
        // which is not what this test is about.
        let outbox = DaemonProcess.stateDirectory(for: daemon.socket) + "/outbox.jsonl"
        #expect(Deadline.wait {
            guard let text = try? String(contentsOfFile: outbox, encoding: .utf8) else { return false }
            return text.isEmpty || text.contains(#""started""#)
        }, "the start's run never marked started")
        #expect(daemon.stop(SIGKILL) == 128 + SIGKILL)
        try #require(ContinuousClock.now - asked < .seconds(6), "killed before a's end: \(told())")
        // Down until b's end (at most 8 s after the answer) is more than a second past.
        let downFor = answered + .seconds(9.2) - ContinuousClock.now
        if downFor > .zero { Thread.sleep(forTimeInterval: Double(downFor.components.seconds) + Double(downFor.components.attoseconds) / 1e18) }
        daemon = try self.daemon()
        #expect(Deadline.wait { told().count == 5 }, "\(told())")
        let lines = told()
        #expect(lines.map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == ["start a", "expired a", "phase b", "expired b", "phase c"])
        let lateness = lines.dropFirst().compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
        #expect(lateness.count == 4 && lateness.allSatisfy { $0 > 0 }, "told late: \(lines)")
        #expect(lateness.count == 4 && lateness[0] > lateness[2], "a's end further back than b's: \(lines)")
        let pomo = try StopwatchClient(socketPath: daemon.socket).get("pomo")
        #expect(pomo.cycle?.phase == 2 && pomo.cycle?.round == 1 && pomo.state == .counting, "\(pomo)")
        #expect(pomo.elapsedMs >= 1200 && pomo.elapsedMs < 600_000, "c counts from b's end: \(pomo)")
        let intervals = try RawConnection.streamedHistory(daemon.socket).filter { $0.name == "pomo" }
        #expect(intervals.map(\.phase) == ["a", "b", "c"], "\(intervals)")
        #expect(intervals.prefix(2).map(\.elapsedMs) == [6000, 2000])
        // b began where a ended (to a millisecond or two: each is read and rounded on its own).
        #expect(intervals.count == 3 && abs((intervals[0].endMs ?? 0) - intervals[1].startMs) <= 2 && intervals[2].endMs == nil, "\(intervals)")
        #expect(daemon.stop() == 0)
        // Told once: a clean restart tells nothing again.
        daemon = try self.daemon()
        // A start of another told after anything the restart would tell again (one hook at a time).
        _ = try StopwatchClient(socketPath: daemon.socket).start("marker")
        #expect(Deadline.wait { told().count >= 6 }, "\(told())")
        #expect(told().count == 6 && told().last?.hasPrefix("start ") == true, "\(told())")
        #expect(try RawConnection.streamedHistory(daemon.socket).filter { $0.name == "pomo" }.count == 3)
    }
}
