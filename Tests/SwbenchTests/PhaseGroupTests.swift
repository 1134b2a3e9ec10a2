import StopwatchProtocol
import Testing
import Varlink

@testable import swbench

/// The `phase` group: what it asks the daemon for, the baseline's reply, which reply it times,
/// its plan and its target (issue 29: p99 ≤ the raw fan-out's p99 + 1 ms).
struct PhaseGroupTests {
    @Test func startsAutomaticCyclesWithinTheDaemonsLimits() throws {
        let target = Duration.milliseconds(19_990)
        let call = ExpiringStopwatches.cycles.call(999, target: target)
        #expect(call.method == "io.stopwatchd.StartCycle")
        #expect(call.parameters["name"] == .string("cycle999"))
        #expect(call.parameters["auto"] == .bool(true))
        #expect(call.parameters["rounds"] == nil, "no end: nothing after the second phase during a run")
        guard case .array(let phases)? = call.parameters["phases"] else {
            Issue.record("no phases in \(call.json.text)")
            return
        }
        #expect(CyclePlan.phaseCount.contains(phases.count))
        var targets: [Int64] = []
        for phase in phases {
            guard case .object(let fields) = phase, case .string(let label)? = fields["label"], case .int(let ms)? = fields["target_ms"] else {
                Issue.record("a phase that is not {label, target_ms}: \(phase.text)")
                continue
            }
            #expect(CyclePlan.isValidLabel(label))
            #expect(ms >= 1 && ms <= 366 * 86_400_000)
            targets.append(ms)
        }
        #expect(targets.first == target.milliseconds, "the first phase ends at the timed instant")
        #expect(targets.dropFirst().allSatisfy { $0 > 60_000 }, "the next phase outlasts the run")
    }

    @Test func theBaselineSendsTheDaemonsPhaseReply() throws {
        let update = ExpiringStopwatches.cycles.update(7, target: .milliseconds(10_070))
        #expect(update.event == .phase)
        #expect(update.stopwatch.name == "cycle7")
        #expect(update.stopwatch.cycle?.phase == 1)
        #expect(update.stopwatch.cycle?.phases.first?.targetMs == 10_070)
        #expect(update.stopwatch.targetMs == update.stopwatch.cycle?.phases.last?.targetMs, "the second phase's target")
        // It reads back as a Watch reply does.
        #expect(try WatchUpdate(json: update.parameters) == update)
    }

    @Test func timesEachWatchersFirstPhaseReplyNotItsExpiry() {
        func message(_ event: WatchEvent, _ name: String) -> [UInt8] {
            let stopwatch = Stopwatch(name: name, state: .counting, elapsedMs: 0)
            return VarlinkReply(parameters: WatchUpdate(stopwatch: stopwatch, event: event).parameters, continues: true).message
        }
        let deliveries = [
            Delivery(watcher: 0, received: .milliseconds(1_004), message: message(.tick, "cycle0")),
            Delivery(watcher: 0, received: .milliseconds(1_005), message: message(.expired, "cycle0")),
            Delivery(watcher: 0, received: .milliseconds(1_006), message: message(.phase, "cycle0")),
            Delivery(watcher: 1, received: .milliseconds(1_013), message: message(.phase, "cycle1")),
            Delivery(watcher: 0, received: .milliseconds(1_900), message: message(.phase, "cycle0")),
        ]
        let instants: [Duration] = [.milliseconds(1_000), .milliseconds(1_010)]
        let phases = DaemonExpiries.delays(of: deliveries, instants: instants, event: .phase)
        #expect(phases.count == 2)
        #expect(phases.minimum == 3)
        #expect(phases.maximum == 6)
        var expiries = DaemonExpiries.delays(of: deliveries, instants: instants, event: .expired)
        #expect(expiries.count == 1)
        #expect(expiries.median() == 5)
    }

    @Test func smokeRunsAFewCyclesAndTheFullRunAThousand() {
        let smoke = BenchPlan(smoke: true, driftSeconds: nil), full = BenchPlan(smoke: false, driftSeconds: nil)
        #expect(ExpiringStopwatches.cycles.count(in: smoke) <= 20)
        #expect(ExpiringStopwatches.cycles.count(in: full) == 1_000)
        // Time enough to set every cycle, at 5 ms a call, before the first phase ends.
        for plan in [smoke, full] {
            #expect(ExpiringStopwatches.cycles.lead(in: plan) >= .milliseconds(5) * ExpiringStopwatches.cycles.count(in: plan))
        }
    }

    @Test func theGroupIsNamedPhaseAndRunsByDefault() throws {
        let only = try #require(try BenchOptions.parse(["--only", "phase"]))
        #expect(only.runs(.phase))
        #expect(!only.runs(.expiry))
        let all = try #require(try BenchOptions.parse([]))
        #expect(all.runs(.phase))
        #expect(ExpiringStopwatches.cycles.figure == .phaseDelay)
        #expect(FigureKind.phaseDelay.baselineName == "raw fan-out")
    }

    @Test func thePhaseTargetIsTheRawP99PlusOneMillisecond() {
        let target = FigureKind.phaseDelay.target
        #expect(target.isMet(value: 1.9, baseline: 0.9))
        #expect(target.isMet(value: 2.0, baseline: 1.0))
        #expect(!target.isMet(value: 2.01, baseline: 1.0))
        #expect(!target.isMet(value: 0.5, baseline: nil), "no baseline, not met")
    }
}
