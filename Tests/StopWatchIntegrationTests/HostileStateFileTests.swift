import StopwatchDaemon
import Foundation
import StopwatchProtocol
import StopwatchdClient
import Testing

/// Nothing in the state directory can crash the daemon or lose a stopwatch (SPEC §4, "Trust
/// of the filesystem"): each hostile file is moved aside and logged, or — a file the writer
/// can produce — loaded; the other stopwatches are served unchanged; `Watch` on every name
/// gets its first reply.
@Suite("hostile state files")
struct HostileStateFileTests {
    enum Case: String, CaseIterable, CustomTestStringConvertible {
        case overflowingElapsed, originBootMinSameBoot, negativeLap, farFutureBootOrigin
        case fifo, symlinkOutside, directory, twoMebibytes, tenThousandLaps
        case transitionWallMin, transitionWallMax, transitionBootFuture, intervalStartWallZero, intervalStartWallMax
        case intervalStartWallBeyondOrigin, originAwakeMinSameBoot, originAwakeMaxSameBoot
        case badIntervalID
        case cycleWithoutPhases, cycleOfSeventeenPhases, cyclePhaseBeyondItsPhases, cycleRoundsBeyondLimit, negativeSnoozeCount, snoozedCycle

        var testDescription: String { rawValue }
        /// Whether the file is kept and loads: the writer can produce it (or, for a stop's
        /// wall-clock time in the future, a clock set back since: taken as now).
        var loads: Bool { self == .tenThousandLaps || self == .transitionWallMax || self == .badIntervalID || self == .snoozedCycle }
    }

    static let hundredYears: Int64 = 3_155_760_000_000_000_000

    /// Puts the case's file at `bad.json` in `stopwatches`; `outside` is a directory beside
    /// the state directory.
    func plant(_ hostile: Case, in stopwatches: String, outside: String) throws {
        let path = stopwatches + "/bad.json"
        let now = ClockReading.now()
        func write(_ text: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) }
        func record(_ fields: String) -> String { #"{"format":1,"name":"bad",\#(fields)}"# }
        switch hostile {
        case .overflowingElapsed:
            try write(record(#""state":"pause","elapsed_ns":9223372036854775807,"laps_ns":[]"#))
        case .originBootMinSameBoot:
            try write(record(#""state":"counting","elapsed_ns":0,"laps_ns":[],"boot_id":"\#(now.bootID)","origin_boot_ns":\#(Int64.min),"origin_wall_ns":\#(now.wall.nanoseconds)"#))
        case .negativeLap:
            try write(record(#""state":"pause","elapsed_ns":5,"laps_ns":[1,-1]"#))
        case .farFutureBootOrigin:
            let future = now.boot.nanoseconds + 86_400_000_000_000
            try write(record(#""state":"counting","elapsed_ns":0,"laps_ns":[],"boot_id":"\#(now.bootID)","origin_boot_ns":\#(future),"origin_wall_ns":\#(now.wall.nanoseconds)"#))
        case .transitionWallMin, .transitionWallMax:
            let wall = hostile == .transitionWallMin ? Int64.min : Int64.max
            try write(record(#""state":"pause","elapsed_ns":5,"laps_ns":[],"transition_wall_ns":\#(wall)"#))
        case .transitionBootFuture:
            let future = now.boot.nanoseconds + 86_400_000_000_000
            try write(record(#""state":"pause","elapsed_ns":5,"laps_ns":[],"boot_id":"\#(now.bootID)","transition_boot_ns":\#(future)"#))
        case .intervalStartWallZero, .intervalStartWallMax, .intervalStartWallBeyondOrigin:
            let wall = switch hostile {
            case .intervalStartWallZero: Int64(0)
            case .intervalStartWallMax: Int64.max
            default: now.wall.nanoseconds + 1
            }
            try write(record(#""state":"counting","elapsed_ns":0,"laps_ns":[],"boot_id":"\#(now.bootID)","origin_boot_ns":\#(now.boot.nanoseconds),"origin_wall_ns":\#(now.wall.nanoseconds),"counts_sleep":false,"interval_start_wall_ns":\#(wall)"#))
        case .originAwakeMinSameBoot, .originAwakeMaxSameBoot:
            let awake = hostile == .originAwakeMinSameBoot ? Int64.min : Int64.max
            try write(record(#""state":"counting","elapsed_ns":0,"laps_ns":[],"boot_id":"\#(now.bootID)","origin_boot_ns":\#(now.boot.nanoseconds),"origin_wall_ns":\#(now.wall.nanoseconds),"counts_sleep":false,"origin_awake_ns":\#(awake)"#))
        case .badIntervalID:
            try write(record(#""state":"counting","elapsed_ns":0,"laps_ns":[],"boot_id":"\#(now.bootID)","origin_boot_ns":\#(now.boot.nanoseconds),"origin_wall_ns":\#(now.wall.nanoseconds),"interval_id":"NOT-AN-ID""#))
        case .cycleWithoutPhases, .cycleOfSeventeenPhases, .cyclePhaseBeyondItsPhases, .cycleRoundsBeyondLimit:
            let phases = Array(repeating: #"{"label":"focus","target_ns":1000000000}"#, count: hostile == .cycleWithoutPhases ? 0 : hostile == .cycleOfSeventeenPhases ? 17 : 2)
            let position = switch hostile {
            case .cyclePhaseBeyondItsPhases: #""phase":2,"round":1,"rounds":4"#
            case .cycleRoundsBeyondLimit: #""phase":0,"round":1,"rounds":1001"#
            default: #""phase":0,"round":1,"rounds":4"#
            }
            try write(record(#""state":"pause","elapsed_ns":5,"laps_ns":[],"target_ns":1000000000,"expired":false,"cycle":{"phases":[\#(phases.joined(separator: ","))],\#(position),"auto":true}"#))
        case .negativeSnoozeCount:
            try write(record(#""state":"pause","elapsed_ns":5,"laps_ns":[],"target_ns":1000000000,"expired":false,"snooze":{"count":-1,"original_target_ns":1000000000}"#))
        case .snoozedCycle:
            // What the writer makes of a cycle's last phase snoozed: a target of nanoseconds.
            try write(record(#""state":"pause","elapsed_ns":5000000000,"laps_ns":[],"target_ns":65000000001,"expired":false,"cycle":{"phases":[{"label":"focus","target_ns":1000000000},{"label":"rest","target_ns":2000000000}],"phase":1,"round":4,"rounds":4,"auto":true},"snooze":{"count":2,"original_target_ns":2000000000}"#))
        case .fifo:
            #expect(mkfifo(path, 0o600) == 0)
        case .symlinkOutside:
            // A valid record outside: loading it would mean the link was followed.
            try Data(record(#""state":"pause","elapsed_ns":7,"laps_ns":[]"#).utf8).write(to: URL(fileURLWithPath: outside + "/victim.json"))
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: outside + "/victim.json")
        case .directory:
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        case .twoMebibytes:
            let laps = Array(repeating: "1000000", count: (2 << 20) / 8).joined(separator: ",")
            try write(record(#""state":"pause","elapsed_ns":1000000,"laps_ns":[\#(laps)]"#))
        case .tenThousandLaps:
            let laps = Array(repeating: "\(Self.hundredYears)", count: 10_000).joined(separator: ",")
            try write(record(#""state":"pause","elapsed_ns":\#(Self.hundredYears),"laps_ns":[\#(laps)]"#))
        }
    }

    @Test("moved aside and logged (or, at the writer's limits, loaded); the rest served; Watch answers on every name",
          arguments: Case.allCases)
    func hostileFile(_ hostile: Case) throws {
        let directory = try TestDirectory()
        let state = DaemonProcess.stateDirectory(for: directory.socket)
        let stopwatches = state + "/stopwatches"
        let outside = directory.file("outside")
        try FileManager.default.createDirectory(atPath: stopwatches, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let good = #"{"format":1,"name":"good","state":"pause","elapsed_ns":1234000000,"laps_ns":[500000000]}"#
        try Data(good.utf8).write(to: URL(fileURLWithPath: stopwatches + "/good.json"))
        try plant(hostile, in: stopwatches, outside: outside)
        let victim = FileManager.default.contents(atPath: outside + "/victim.json")

        let daemon = try DaemonProcess(socket: directory.socket)
        let client = StopwatchClient(socketPath: directory.socket, timeout: .seconds(10))
        #expect(try client.get("good") == Stopwatch(name: "good", state: .pause, elapsedMs: 1234, lapsMs: [500]))
        #expect(FileManager.default.contents(atPath: stopwatches + "/good.json") == Data(good.utf8))

        let files = try FileManager.default.contentsOfDirectory(atPath: stopwatches)
        if hostile.loads {
            let kept = try client.get("bad")
            if hostile == .tenThousandLaps {
                #expect(kept.lapsMs.count == 10_000)
                #expect(kept.elapsedMs == Self.hundredYears / 1_000_000)
            } else if hostile == .badIntervalID {
                // The bad id only is dropped: the stopwatch counts on, its interval under a new
                // id, which its file keeps.
                #expect(kept.state == .counting)
                let id = try #require(try RawConnection.streamedHistory(directory.socket).first { $0.name == "bad" && $0.endMs == nil }?.id)
                #expect(IntervalID.isValid(id))
                #expect(Deadline.wait { (try? String(contentsOfFile: stopwatches + "/bad.json", encoding: .utf8))?.contains(#""interval_id":"\#(id)""#) == true })
                #expect(daemon.waitForLog(containing: "interval_id that is not"), "\(daemon.readLog())")
            } else if hostile == .snoozedCycle {
                #expect(kept.state == .pause && kept.elapsedMs == 5000 && kept.targetMs == 65000)
                #expect(kept.cycle == Stopwatch.Cycle(
                    phases: [.init(label: "focus", targetMs: 1000), .init(label: "rest", targetMs: 2000)], phase: 1, round: 4, rounds: 4, auto: true
                ))
            } else {
                #expect(kept.state == .pause && kept.elapsedMs == 0)
            }
            #expect(!files.contains { $0.contains("corrupt") })
        } else {
            #expect(try client.list().map(\.name) == ["good"])
            #expect(!files.contains("bad.json"), "\(files)")
            #expect(files.contains { $0.hasPrefix("bad.json.corrupt-") }, "\(files)")
            #expect(daemon.waitForLog(containing: "bad.json is unreadable"), "\(daemon.readLog())")
        }
        #expect(FileManager.default.contents(atPath: outside + "/victim.json") == victim)
        for name in ["good", "bad", "default"] {
            let watch = try client.openWatch(name)
            defer { watch.close() }
            #expect(try watch.next().name == name)
        }
        #expect(daemon.isRunning)
    }
}
