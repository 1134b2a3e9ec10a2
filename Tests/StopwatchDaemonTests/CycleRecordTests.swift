import StopWatchCore
@testable import StopwatchDaemon
import StopwatchProtocol
import Testing
import Varlink

/// A cycle and a countdown's snoozes in the state file: kept through a restart exactly, files
/// of earlier versions read as they were, and nothing out of range loads (or traps).
@Suite("persistence: cycles and snoozes")
struct CycleRecordTests {
    let saved = ClockReading(boot: .seconds(1000), wall: .seconds(1_700_000_000), bootID: "boot-a")

    static let focusBreak = [StopWatchCycle.Phase(label: "focus", target: .seconds(25)), .init(label: "break \"ç\"", target: .milliseconds(5001))]

    static func cycle(rounds: Int? = 3, auto: Bool = true, phase: Int = 0, round: Int = 1) -> StopWatchCycle {
        StopWatchCycle(phases: focusBreak, rounds: rounds, auto: auto, phase: phase, round: round)!
    }

    /// Snapshots the daemon can have, each with a cycle or snoozes, at `saved`.
    func snapshots() throws -> [StopWatchSnapshot] {
        let now = saved.boot
        let started = try StopWatchSnapshot.stopped.applying(.startCycle(Self.cycle()), at: now - .seconds(40))
        // Begun 40 s ago: its second phase began 15 s ago, expired after its 5.001 s, and was
        // snoozed by 60 s 0.500000123 s ago (a target of nanoseconds, not whole milliseconds:
        // the elapsed time then plus 60 s).
        let second = try started.applying(.expire, at: now - .seconds(15)).applying(.advance, at: now - .seconds(15))
        let snoozed = try second.applying(.expire, at: now - .microseconds(9_998_999))
            .applying(.snooze(by: .seconds(60)), at: now - .nanoseconds(500_000_123))
        let plainSnoozed = try StopWatchSnapshot.stopped.applying(.countdown(.seconds(10)), at: now - .seconds(30))
            .applying(.expire, at: now - .seconds(20)).applying(.snooze(by: .seconds(1)), at: now - .nanoseconds(19_999_999_999))
            .applying(.expire, at: now).applying(.snooze(by: .seconds(300)), at: now)
        return [
            started,
            second,
            snoozed,
            try snoozed.applying(.stop, at: now),
            try snoozed.applying(.stop, at: now).applying(.reset, at: now),
            try StopWatchSnapshot.stopped.applying(.startCycle(Self.cycle(rounds: nil, auto: false)), at: now).applying(.next, at: now)
                .applying(.next, at: now).applying(.next, at: now),
            try StopWatchSnapshot.stopped.applying(.setCountsSleep(false), at: now).applying(.startCycle(Self.cycle(rounds: 1000)), at: now),
            plainSnoozed,
            try plainSnoozed.applying(.stop, at: now),
        ]
    }

    @Test("a cycle and snoozes survive the trip to the file and back, in every state, and restore the same stopwatch")
    func roundTrip() throws {
        let snapshots = try snapshots()
        #expect(snapshots[2].snooze == StopWatchSnooze(count: 1, originalTarget: .milliseconds(5001)))
        #expect(snapshots[2].target == .nanoseconds(74_499_999_877), "not whole milliseconds")
        #expect(snapshots[5].cycle?.round == 2 && snapshots[5].cycle?.rounds == nil)
        #expect(snapshots[7].snooze?.count == 2)
        for snapshot in snapshots {
            let record = StopwatchRecord(name: "tea", snapshot: snapshot, at: saved)
            #expect(record.cycle == snapshot.cycle)
            #expect(record.snooze == snapshot.snooze)
            #expect(record.serialized == record.json.serialized)
            let reread = try StopwatchRecord(json: JSONParser.parse(record.serialized))
            #expect(reread == record)
            let restored = reread.snapshot(restoredAt: saved)
            #expect(restored == snapshot.ticked(at: saved.boot))
            #expect(restored.cycle == snapshot.cycle && restored.snooze == snapshot.snooze)
            #expect(restored.expiry == snapshot.expiry)
        }
    }

    @Test("after a reboot a cycle goes on from the wall clock at the phase it was in, its snoozes kept")
    func reboot() throws {
        let snoozed = try snapshots()[2]
        let record = StopwatchRecord(name: "tea", snapshot: snoozed, at: saved)
        let afterReboot = ClockReading(boot: .seconds(20), wall: saved.wall + .seconds(30), bootID: "boot-b")
        let restored = record.snapshot(restoredAt: afterReboot)
        #expect(restored.cycle == snoozed.cycle && restored.snooze == snoozed.snooze && restored.target == snoozed.target)
        #expect(restored.elapsed(at: afterReboot.boot) == snoozed.elapsed(at: saved.boot) + .seconds(30))
        // Due where the snooze put it, on the new boot's clock.
        #expect(restored.expiry == afterReboot.boot + (snoozed.expiry! - saved.boot) - .seconds(30))
    }

    @Test("the file's cycle and snooze, as written")
    func written() throws {
        let text = String(decoding: StopwatchRecord(name: "tea", snapshot: try snapshots()[3], at: saved).serialized, as: UTF8.self)
        #expect(text.contains(#""cycle":{"phases":[{"label":"focus","target_ns":25000000000},{"label":"break \"ç\"","target_ns":5001000000}],"phase":1,"round":1,"rounds":3,"auto":true}"#), "\(text)")
        #expect(text.contains(#""snooze":{"count":1,"original_target_ns":5001000000}"#), "\(text)")
        #expect(text.contains(#""target_ns":74499999877"#), "\(text)")
        // An endless manual one: no rounds.
        let endless = String(decoding: StopwatchRecord(name: "e", snapshot: try snapshots()[5], at: saved).serialized, as: UTF8.self)
        #expect(endless.contains(#""phase":1,"round":2,"auto":false}"#), "\(endless)")
        #expect(!endless.contains("rounds") && !endless.contains("snooze"))
    }

    @Test("files of earlier versions (no cycle, no snooze) load as they were, and are written back the same")
    func earlierFiles() throws {
        let written = [
            #"{"format":1,"name":"c","state":"pause","elapsed_ns":3000000000,"laps_ns":[],"target_ns":60000000000,"expired":false}"#,
            #"{"format":1,"name":"s","state":"stopped","elapsed_ns":0,"laps_ns":[],"target_ns":60000000000,"expired":false}"#,
            #"{"format":1,"name":"p","state":"pause","elapsed_ns":1500000000,"laps_ns":[1000000000]}"#,
        ]
        for text in written {
            let record = try StopwatchRecord(json: JSONParser.parse(text))
            #expect(record.cycle == nil && record.snooze == nil)
            let restored = record.snapshot(restoredAt: saved)
            #expect(restored.cycle == nil && restored.snooze == nil)
            #expect(record.serialized == Array(text.utf8))
        }
        #expect(try StopwatchRecord(json: JSONParser.parse(written[0])).snapshot(restoredAt: saved) == .paused(at: .seconds(3), target: .seconds(60)))
        // And a countdown written now without a cycle says nothing of one.
        let plain = String(decoding: StopwatchRecord(name: "c", snapshot: .paused(at: .seconds(3), target: .seconds(60)), at: saved).serialized, as: UTF8.self)
        #expect(!plain.contains("cycle") && !plain.contains("snooze"))
    }

    /// A paused countdown's record with `fields` added after its target.
    static func record(_ fields: String, target: String = "5000000000") -> String {
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[],"target_ns":\#(target),"expired":false\#(fields)}"#
    }

    static func cycleField(phases: String = #"[{"label":"focus","target_ns":5000000000},{"label":"break","target_ns":1000000000}]"#, rest: String = #""phase":0,"round":1,"rounds":4,"auto":true"#) -> String {
        #","cycle":{"phases":\#(phases),\#(rest)}"#
    }

    static func phases(_ count: Int) -> String {
        "[" + (0..<count).map { #"{"label":"p\#($0)","target_ns":1000000}"# }.joined(separator: ",") + "]"
    }

    @Test("a cycle or snooze a file may hold: read back at its place")
    func accepted() throws {
        let record = try StopwatchRecord(json: JSONParser.parse(Self.record(Self.cycleField(rest: #""phase":1,"round":4,"rounds":4,"auto":false"#))))
        let cycle = try #require(record.cycle)
        #expect(cycle.phase == 1 && cycle.round == 4 && cycle.rounds == 4 && !cycle.auto && cycle.isLast)
        #expect(cycle.phases == [.init(label: "focus", target: .seconds(5)), .init(label: "break", target: .seconds(1))])
        #expect(record.snapshot(restoredAt: saved).cycle == cycle)
        // Sixteen phases, labels of 32 scalars, 1,000 rounds, the longest target.
        let sixteen = try StopwatchRecord(json: JSONParser.parse(Self.record(Self.cycleField(phases: Self.phases(16), rest: #""phase":15,"round":1000,"rounds":1000,"auto":true"#))))
        #expect(sixteen.cycle?.phases.count == 16 && sixteen.cycle?.isLast == true)
        let longest = String(repeating: "é", count: 32)
        let wide = try StopwatchRecord(json: JSONParser.parse(Self.record(Self.cycleField(phases: #"[{"label":"\#(longest)","target_ns":31622400000000000}]"#, rest: #""phase":0,"round":7,"auto":true"#))))
        #expect(wide.cycle?.current == .init(label: longest, target: .seconds(366 * 86_400)))
        #expect(wide.cycle?.rounds == nil && wide.cycle?.round == 7)
        // The most snoozes, and a snoozed target past 366 days (overtime, then a snooze).
        let snoozed = try StopwatchRecord(json: JSONParser.parse(Self.record(
            #","snooze":{"count":\#(StopwatchRecord.maximumSnoozes),"original_target_ns":1000000}"#, target: "\(StopwatchRecord.maximumSnoozedTarget.nanoseconds)"
        )))
        #expect(snoozed.snooze == StopWatchSnooze(count: Int(StopwatchRecord.maximumSnoozes), originalTarget: .milliseconds(1)))
        #expect(snoozed.target == StopwatchRecord.maximumSnoozedTarget)
        // One more snooze of the most counted changes nothing that could overflow.
        let counting = StopWatchSnapshot.counting(since: .zero, now: .seconds(10), target: .seconds(1), hasExpired: true).restoring(cycle: nil, snooze: snoozed.snooze)
        #expect(try counting.applying(.snooze(by: .seconds(1)), at: .seconds(10)).snooze?.count == Int(StopwatchRecord.maximumSnoozes) + 1)
    }

    /// Records with a cycle or snooze that no daemon writes.
    static let hostileRecords = [
        // Not a cycle.
        record(#","cycle":[]"#), record(#","cycle":"pomodoro""#), record(#","cycle":{}"#),
        // Phases: none, seventeen, not a list, an item that is not a phase.
        record(cycleField(phases: "[]")), record(cycleField(phases: phases(17))), record(cycleField(phases: #"{"label":"a","target_ns":1000000}"#)),
        record(cycleField(phases: "[1]")), record(cycleField(phases: #"[{"target_ns":1000000}]"#)),
        // Labels: not a name part, empty, a space at an end, 33 scalars, not a string.
        record(cycleField(phases: #"[{"label":"a/b","target_ns":1000000}]"#)), record(cycleField(phases: #"[{"label":"","target_ns":1000000}]"#)),
        record(cycleField(phases: #"[{"label":"a ","target_ns":1000000}]"#)), record(cycleField(phases: #"[{"label":"..","target_ns":1000000}]"#)),
        record(cycleField(phases: #"[{"label":"\u0007","target_ns":1000000}]"#)),
        record(cycleField(phases: #"[{"label":"\#(String(repeating: "x", count: 33))","target_ns":1000000}]"#)),
        record(cycleField(phases: #"[{"label":7,"target_ns":1000000}]"#)),
        // Targets: zero, negative, past 366 days, not whole milliseconds, not a number, none.
        record(cycleField(phases: #"[{"label":"a","target_ns":0}]"#)), record(cycleField(phases: #"[{"label":"a","target_ns":-1000000}]"#)),
        record(cycleField(phases: #"[{"label":"a","target_ns":31622400001000000}]"#)), record(cycleField(phases: #"[{"label":"a","target_ns":1500}]"#)),
        record(cycleField(phases: #"[{"label":"a","target_ns":"25m"}]"#)), record(cycleField(phases: #"[{"label":"a"}]"#)),
        record(cycleField(phases: #"[{"label":"a","target_ns":9223372036854775807}]"#)),
        // The position: a phase it has not, rounds out of 1…1,000, a round out of 1…rounds.
        record(cycleField(rest: #""phase":2,"round":1,"rounds":4,"auto":true"#)), record(cycleField(rest: #""phase":-1,"round":1,"rounds":4,"auto":true"#)),
        record(cycleField(rest: #""phase":9223372036854775807,"round":1,"auto":true"#)), record(cycleField(rest: #""round":1,"rounds":4,"auto":true"#)),
        record(cycleField(rest: #""phase":0,"round":1,"rounds":0,"auto":true"#)), record(cycleField(rest: #""phase":0,"round":1,"rounds":1001,"auto":true"#)),
        record(cycleField(rest: #""phase":0,"round":1,"rounds":-4,"auto":true"#)), record(cycleField(rest: #""phase":0,"round":1,"rounds":"4","auto":true"#)),
        record(cycleField(rest: #""phase":0,"round":1,"rounds":9223372036854775807,"auto":true"#)),
        record(cycleField(rest: #""phase":0,"round":0,"rounds":4,"auto":true"#)), record(cycleField(rest: #""phase":0,"round":5,"rounds":4,"auto":true"#)),
        record(cycleField(rest: #""phase":0,"round":-9223372036854775808,"auto":true"#)), record(cycleField(rest: #""phase":0,"rounds":4,"auto":true"#)),
        // auto: missing, not true or false.
        record(cycleField(rest: #""phase":0,"round":1,"rounds":4"#)), record(cycleField(rest: #""phase":0,"round":1,"rounds":4,"auto":1"#)),
        // Snoozes: negative, none, too many, not a number; the original target out of range; not an object.
        record(#","snooze":{"count":-1,"original_target_ns":1000000}"#), record(#","snooze":{"count":0,"original_target_ns":1000000}"#),
        record(#","snooze":{"count":\#(StopwatchRecord.maximumSnoozes + 1),"original_target_ns":1000000}"#),
        record(#","snooze":{"count":9223372036854775807,"original_target_ns":1000000}"#),
        record(#","snooze":{"count":"2","original_target_ns":1000000}"#), record(#","snooze":{"original_target_ns":1000000}"#),
        record(#","snooze":{"count":1,"original_target_ns":0}"#), record(#","snooze":{"count":1,"original_target_ns":1500}"#),
        record(#","snooze":{"count":1}"#), record(#","snooze":1"#),
        // A snoozed target: none, zero, negative, past 100 years and a day.
        record(#","snooze":{"count":1,"original_target_ns":1000000}"#, target: "0"),
        record(#","snooze":{"count":1,"original_target_ns":1000000}"#, target: "-5"),
        record(#","snooze":{"count":1,"original_target_ns":1000000}"#, target: "\(StopwatchRecord.maximumSnoozedTarget.nanoseconds + 1)"),
        record(#","snooze":{"count":1,"original_target_ns":1000000}"#, target: "9223372036854775807"),
        // Without a target, neither is anything.
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[]\#(cycleField())}"#,
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[],"snooze":{"count":1,"original_target_ns":1000000}}"#,
    ]

    @Test("a cycle or snooze out of range is refused as the record is read (the file is then moved aside)", arguments: hostileRecords)
    func refused(text: String) throws {
        #expect(throws: MalformedMessage.self) { try StopwatchRecord(json: JSONParser.parse(text)) }
    }

    @Test("a target of nanoseconds is a snooze's only: without one, refused as before")
    func nanosecondTargetNeedsASnooze() throws {
        #expect(throws: MalformedMessage.self) { try StopwatchRecord(json: JSONParser.parse(Self.record("", target: "69499999877"))) }
        let snoozed = try StopwatchRecord(json: JSONParser.parse(Self.record(#","snooze":{"count":1,"original_target_ns":5000000000}"#, target: "69499999877")))
        #expect(snoozed.target == .nanoseconds(69_499_999_877))
    }
}
