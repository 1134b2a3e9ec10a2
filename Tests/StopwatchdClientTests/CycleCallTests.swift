import StopwatchProtocol
@testable import StopwatchdClient
import Testing
import Varlink

/// `startCycle`, `next`, `snooze` and `restart`: what the client sends (SPEC §3's parameters,
/// absent ones left out), the cycle read back from the reply, and the refusals said for
/// people. Against a socket that answers with canned replies.
@Suite("cycle calls")
struct CycleCallTests {
    typealias Daemon = CorrectionCallTests.OneCallDaemon
    static let cycleReply = #"{"parameters":{"stopwatch":{"name":"pomo","state":"counting","elapsed_ms":0,"laps_ms":[],"target_ms":1500000,"cycle":{"phases":[{"label":"focus","target_ms":1500000},{"label":"break","target_ms":300000}],"phase":1,"round":2,"rounds":4,"auto":true}}}}"#
    static let phases = [Stopwatch.Phase(label: "focus", targetMs: 1_500_000), Stopwatch.Phase(label: "break", targetMs: 300_000)]

    @Test("startCycle sends StartCycle with phases as {label,target_ms}, rounds and auto; the reply's cycle is read")
    func startCycleSent() throws {
        let daemon = try Daemon(reply: Self.cycleReply)
        let stopwatch = try daemon.client.startCycle("pomo", phases: Self.phases, rounds: 4, auto: false)
        let call = try daemon.call()
        #expect(call.method == "io.stopwatchd.StartCycle")
        #expect(call.parameters == [
            "name": .string("pomo"),
            "phases": .array([
                .object(["label": .string("focus"), "target_ms": .int(1_500_000)]),
                .object(["label": .string("break"), "target_ms": .int(300_000)]),
            ]),
            "rounds": .int(4), "auto": .bool(false),
        ])
        #expect(stopwatch.cycle == Stopwatch.Cycle(phases: Self.phases, phase: 1, round: 2, rounds: 4, auto: true))
        #expect(stopwatch.cycle?.currentLabel == "break")
    }

    @Test("startCycle without rounds leaves rounds out, and without a name sends none")
    func startCycleWithoutRounds() throws {
        let daemon = try Daemon(reply: Self.cycleReply)
        _ = try daemon.client.startCycle(nil, phases: Self.phases, rounds: nil, auto: true)
        #expect(try daemon.call().parameters == [
            "phases": .array(Self.phases.map(\.json)), "auto": .bool(true),
        ])
    }

    @Test("next, snooze (by_ms) and restart send their methods with the name", arguments: ["Next", "Snooze", "Restart"])
    func commandsSent(method: String) throws {
        let daemon = try Daemon(reply: Self.cycleReply)
        let client = daemon.client
        let stopwatch = switch method {
        case "Next": try client.next("pomo")
        case "Snooze": try client.snooze("pomo", by: .seconds(300))
        default: try client.restart("pomo")
        }
        let call = try daemon.call()
        #expect(call.method == "io.stopwatchd.\(method)")
        #expect(call.parameters == (method == "Snooze" ? ["name": .string("pomo"), "by_ms": .int(300_000)] : ["name": .string("pomo")]))
        #expect(stopwatch.name == "pomo")
    }

    @Test("a refusal of Next, Snooze or Restart says why, in one line, exit 1; so does one of a cycle still catching up", arguments: [
        ("Next", Stopwatch(name: "tea", state: .counting, elapsedMs: 1), "'tea' is not a cycle: next needs one (start one with 'swctl cycle')"),
        (
            "Next", Stopwatch(name: "c", state: .counting, elapsedMs: 300, targetMs: 200, cycle: .init(phases: phases, phase: 1, round: 2, rounds: 2)),
            "'c' is in the last phase of its last round: there is no next phase ('swctl restart c' runs the cycle again)"
        ),
        ("Snooze", Stopwatch(name: "tea", state: .counting, elapsedMs: 1, targetMs: 240_000), "'tea' has not expired: snooze is for a countdown in overtime"),
        ("Snooze", Stopwatch(name: "tea", state: .counting, elapsedMs: 1), "'tea' is not a countdown: snooze is for a countdown in overtime"),
        (
            "Snooze", Stopwatch(name: "tea", state: .pause, elapsedMs: 300_000, targetMs: 240_000),
            "'tea' is not counting: snooze is for a countdown in overtime ('swctl start tea' resumes it)"
        ),
        ("Restart", Stopwatch(name: "tea", state: .stopped, elapsedMs: 0), "'tea' is not a countdown or a cycle: restart needs one (start one with 'swctl timer' or 'swctl cycle')"),
        (
            "Stop", Stopwatch(name: "c", state: .counting, elapsedMs: 300, targetMs: 200, cycle: .init(phases: phases, phase: 0, round: 7)),
            "'c' is still catching up the phases that ended while stopwatchd was away; try again in a moment"
        ),
    ])
    func refusalsSaid(method: String, stopwatch: Stopwatch, message: String) {
        let error = ClientError(refusal: .invalidTransition(stopwatch, method: method))
        #expect(error.description == message)
        #expect(error.exitStatus == 1)
    }

    @Test("a daemon without the cycle methods is told too old (exit 70)", arguments: ["StartCycle", "Next", "Snooze", "Restart"])
    func daemonWithoutCycles(method: String) {
        let error = ClientError(refusal: .methodNotFound("io.stopwatchd.\(method)"))
        #expect(error.description == "this stopwatchd is too old for \(method); upgrade it")
        #expect(error.exitStatus == 70)
    }
}
