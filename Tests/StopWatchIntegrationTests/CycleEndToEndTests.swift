import Foundation
import StopwatchProtocol
import StopwatchdClient
import Testing
import Varlink

/// Cycles through `swctl` and a real daemon: a cycle of two rounds runs its four phases by
/// itself and leaves four intervals labelled in order; `wait --for phase` returns at a phase
/// change; `next`, `snooze` and `restart` round trips, and their refusals. Deadlines are
/// generous and only bound how long a test may take; what is checked is the order of
/// things, never clock values.
@Suite("cycles end to end")
struct CycleEndToEndTests {
    static let deadline: Duration = .seconds(60)

    static func swctl(_ daemon: DaemonProcess, _ arguments: String...) throws -> Swctl {
        try Swctl.run(arguments, socket: daemon.socket)
    }

    /// `log --json` of `name`, decoded.
    static func intervals(_ daemon: DaemonProcess, _ name: String) throws -> [Interval] {
        let log = try swctl(daemon, "log", name, "--json")
        guard log.status == 0, case .array(let items) = try JSONParser.parse(log.output) else { return [] }
        return try items.map { try Interval(json: $0) }
    }

    @Test("cycle c 200ms:a 200ms:b --rounds 2 ends after four phases, with four intervals in log --json labelled a, b, a, b")
    func twoRounds() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let started = try Self.swctl(daemon, "cycle", "c", "200ms:a", "200ms:b", "--rounds", "2")
        #expect(started.status == 0, "\(started.error)")
        #expect(started.lines.first?.hasPrefix("c counting ") == true && started.lines.first?.hasSuffix(" in a 1/2") == true, "\(started.output)")
        // The end: four ended intervals (the last one ends when it is stopped: it stays
        // expired, counting, in its last phase).
        let ended = Deadline.wait(Self.deadline) {
            let status = try? StopwatchClient(socketPath: daemon.socket).get("c")
            return status?.cycle?.round == 2 && status?.cycle?.phase == 1 && status.map { $0.elapsedMs >= ($0.targetMs ?? .max) } == true
        }
        #expect(ended, "the cycle did not reach the end of its last phase")
        #expect(try Self.swctl(daemon, "stop", "c").status == 0)
        var intervals: [Interval] = []
        Deadline.wait(Self.deadline) {
            intervals = (try? Self.intervals(daemon, "c")) ?? []
            return intervals.count >= 4 && intervals.allSatisfy { $0.endMs != nil }
        }
        #expect(intervals.map(\.phase) == ["a", "b", "a", "b"], "\(intervals)")
        #expect(intervals.dropLast().allSatisfy { $0.elapsedMs == 200 }, "\(intervals.map(\.elapsedMs))")
        // And the history by phase: two of each, 400 ms of a and b at least.
        let report = try Self.swctl(daemon, "report", "--by", "phase", "--csv")
        #expect(report.status == 0, "\(report.error)")
        #expect(report.lines.first == "phase,name,elapsed_ms")
        #expect(Set(report.lines.dropFirst().map { $0.split(separator: ",").prefix(2).joined(separator: ",") }) == ["a,c", "b,c"], "\(report.output)")
        let table = try Self.swctl(daemon, "log", "c")
        #expect(table.lines.first?.contains("PHASE") == true, "\(table.output)")
        // A wait on a cycle that has run its rounds returns at once.
        #expect(try Self.swctl(daemon, "start", "c").status == 0)
        let wait = try Self.swctl(daemon, "wait", "c", "--timeout", "30s")
        #expect(wait.status == 0, "\(wait.error)")
    }

    @Test("wait --for phase (the default for a cycle) returns at the next phase change, not at once")
    func waitForPhase() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        // Paused in its first phase while the wait connects, so that the phase cannot change
        // before the wait is there to see it; then resumed, to end by itself. Its 5 s leave
        // room for a stalled test between the cycle and its stop (under a sanitizer, beside
        // the other suites).
        #expect(try Self.swctl(daemon, "cycle", "p", "5s:one", "1h:two").status == 0)
        #expect(try Self.swctl(daemon, "stop", "p").status == 0)
        let paused = try StopwatchClient(socketPath: daemon.socket).get("p")
        try #require(paused.cycle?.currentLabel == "one" && paused.elapsedMs < (paused.targetMs ?? 0), "the first phase ended before the stop: \(paused)")
        let wait = try TimerTests.startWait(daemon, ["p", "--for", "phase"])
        #expect(try Self.swctl(daemon, "start", "p").status == 0)
        let ended = wait.wait(timeout: Self.deadline)
        #expect(ended == .exited(0), "\(String(describing: ended))")
        let status = try StopwatchClient(socketPath: daemon.socket).get("p")
        #expect(status.cycle?.currentLabel == "two", "\(status)")
        // In a phase of an hour, the default wait waits: it times out.
        let waitOn = try Self.swctl(daemon, "wait", "p", "--timeout", "200ms")
        #expect(waitOn.status == 124, "\(waitOn.error)")
        // next ends it: a wait started before sees the phase event.
        let waitNext = try TimerTests.startWait(daemon, ["p"])
        let next = try Self.swctl(daemon, "next", "p")
        #expect(next.status == 0, "\(next.error)")
        #expect(next.lines.first?.hasSuffix(" in one 2") == true, "\(next.output)")
        #expect(waitNext.wait(timeout: Self.deadline) == .exited(0))
    }

    @Test("next, snooze and restart round trips; their refusals one line each, exit 1, nothing changed")
    func commands() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        // A manual cycle: the phase runs on in overtime until next.
        #expect(try Self.swctl(daemon, "cycle", "m", "100ms:work", "1h:rest", "--manual").status == 0)
        let overtime = Deadline.wait(Self.deadline) { (try? StopwatchClient(socketPath: daemon.socket).get("m")).map { $0.elapsedMs >= ($0.targetMs ?? .max) } == true }
        #expect(overtime)
        #expect(try StopwatchClient(socketPath: daemon.socket).get("m").cycle?.currentLabel == "work")
        // Snoozed: counting on towards elapsed + 5 minutes.
        let snooze = try Self.swctl(daemon, "--json", "snooze", "m")
        #expect(snooze.status == 0, "\(snooze.error)")
        let snoozed = try Stopwatch(json: JSONParser.parse(snooze.output))
        #expect(snoozed.targetMs.map { $0 >= 300_100 && $0 - snoozed.elapsedMs <= 300_000 } == true, "\(snoozed)")
        let notExpired = try Self.swctl(daemon, "snooze", "m")
        #expect(notExpired.status == 1)
        #expect(notExpired.error == "swctl: 'm' has not expired: snooze is for a countdown in overtime\n", "\(notExpired.error)")
        let next = try Self.swctl(daemon, "next", "m")
        #expect(next.status == 0, "\(next.error)")
        #expect(next.lines.first?.hasSuffix(" in rest 1") == true, "\(next.output)")
        let restart = try Self.swctl(daemon, "restart", "m")
        #expect(restart.status == 0, "\(restart.error)")
        #expect(restart.lines.first?.hasSuffix(" in work 1") == true, "\(restart.output)")
        // Refusals: a plain stopwatch, a name never created, a usage error before any call.
        #expect(try Self.swctl(daemon, "start", "tea").status == 0)
        let notACycle = try Self.swctl(daemon, "next", "tea")
        #expect(notACycle.status == 1)
        #expect(notACycle.error == "swctl: 'tea' is not a cycle: next needs one (start one with 'swctl cycle')\n")
        let plainRestart = try Self.swctl(daemon, "restart", "tea")
        #expect(plainRestart.status == 1 && plainRestart.error.contains("'tea' is not a countdown or a cycle"), "\(plainRestart.error)")
        let missing = try Self.swctl(daemon, "snooze", "nothing")
        #expect(missing.status == 1 && missing.error.hasPrefix("swctl: there is no stopwatch 'nothing'"), "\(missing.error)")
        let tooMany = try Swctl.run(["cycle", "x"] + Array(repeating: "1s", count: 17), socket: daemon.socket)
        #expect(tooMany.status == 2 && tooMany.error.contains("from 1 to 16 phases"), "\(tooMany.error)")
        #expect(try StopwatchClient(socketPath: daemon.socket).list().map(\.name) == ["m", "tea"])
    }
}
