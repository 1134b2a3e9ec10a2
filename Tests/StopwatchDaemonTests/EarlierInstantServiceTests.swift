import Foundation
import Glibc
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
@testable import StopwatchDaemon
import Testing
import Varlink

/// Start, Stop and Toggle with `at_ms` and `note`, and SetCountsSleep, through the service on
/// manual clocks (the boot clock at 100 s, the wall clock at `wall`); nothing sleeps.
@Suite("stopwatch service: times in the past, notes, sleep")
final class EarlierInstantServiceTests {
    let root: String
    static let wall: Int64 = 1_700_000_000_000

    init() throws {
        var template = Array("/tmp/swpast-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    func fixture() -> StopwatchServiceFixture {
        StopwatchServiceFixture(now: .seconds(1000), historyDirectory: root, wallClock: ManualWallClock(Self.wall))
    }

    /// Moves both clocks on together.
    func pass(_ f: StopwatchServiceFixture, _ duration: Duration) {
        f.time.advance(by: duration)
        f.wallClock.advance(by: duration.milliseconds)
    }

    func stopwatch(_ f: StopwatchServiceFixture, _ method: String, _ parameters: JSONObject) throws -> Stopwatch {
        try Stopwatch(json: #require(f.reply(method, parameters)?["stopwatch"]))
    }

    func refusal(_ f: StopwatchServiceFixture, _ method: String, _ parameters: JSONObject) -> (name: String, reason: String)? {
        guard case .failure(let error) = f.call(method, parameters) else { return nil }
        guard case .string(let reason)? = error.parameters["reason"] else { return (error.name, "") }
        return (error.name, reason)
    }

    @Test("a Start 10 minutes ago reads 10 minutes now, and is an ordinary start event")
    func startInThePast() throws {
        let f = fixture()
        let started = try stopwatch(f, "Start", ["name": .string("work"), "at_ms": .int(Self.wall - 600_000)])
        #expect(started.state == .counting && started.elapsedMs == 600_000)
        #expect(f.events.map(\.event) == [.start])
        #expect(f.events.first?.update.stopwatch.elapsedMs == 600_000)
        pass(f, .seconds(5))
        #expect(f.stopwatch("Get", "work")?.elapsedMs == 605_000)
        // Still counting: History shows it open, from then.
        let open = try #require(f.historyIntervals(["name": .string("work")]).last)
        #expect(open.startMs == Self.wall - 600_000 && open.endMs == nil)
    }

    @Test("a Stop in the past ends the interval then, and takes off the time since")
    func stopInThePast() throws {
        let f = fixture()
        _ = f.reply("Start", ["name": .string("work")])
        pass(f, .seconds(3600))
        let stopAt = Self.wall + 3_480_000  // 2 minutes ago
        let stopped = try stopwatch(f, "Stop", ["name": .string("work"), "at_ms": .int(stopAt)])
        #expect(stopped.state == .pause && stopped.elapsedMs == 3_480_000)
        #expect(f.events.map(\.event) == [.start, .stop])
        let interval = try #require(f.historyIntervals(["name": .string("work")]).last)
        #expect(interval.endMs == stopAt)
        #expect(interval.startMs == Self.wall)
        #expect(interval.elapsedMs == 3_480_000)
        // Later: the pause's time stays what the stop left.
        pass(f, .seconds(10))
        #expect(f.stopwatch("Get", "work")?.elapsedMs == 3_480_000)
    }

    @Test("at_ms in the future is refused, saying until when; a few ms ahead are taken as now")
    func futureRefused() throws {
        let f = fixture()
        let refused = try #require(refusal(f, "Start", ["name": .string("work"), "at_ms": .int(Self.wall + 60_000)]))
        #expect(refused.name == VarlinkError.invalidIntervalName)
        #expect(refused.reason.contains("future") && refused.reason.contains(UTCTime.text(Self.wall)))
        #expect(f.saves.isEmpty)
        #expect(f.stopwatch("Get", "work")?.state == .stopped)
        #expect(f.reply("List")?["stopwatches"] == .array([]))
        let skewed = try stopwatch(f, "Start", ["name": .string("work"), "at_ms": .int(Self.wall + 50)])
        #expect(skewed.state == .counting && skewed.elapsedMs == 0)
    }

    @Test("a Start before the latest stop is refused with the allowed range, and nothing changes")
    func beforeLatestTransitionRefused() throws {
        let f = fixture()
        _ = f.reply("Start", ["name": .string("work")])
        pass(f, .seconds(60))
        _ = f.reply("Stop", ["name": .string("work")])   // at wall + 60 s
        pass(f, .seconds(60))
        let saves = f.saves.count
        let refused = try #require(refusal(f, "Start", ["name": .string("work"), "at_ms": .int(Self.wall + 30_000)]))
        #expect(refused.name == VarlinkError.invalidIntervalName)
        #expect(refused.reason.contains("from \(UTCTime.text(Self.wall + 60_000)) to now, \(UTCTime.text(Self.wall + 120_000))"))
        #expect(f.saves.count == saves)
        #expect(f.stopwatch("Get", "work")?.state == .pause)
        let toggled = try stopwatch(f, "Toggle", ["name": .string("work"), "at_ms": .int(Self.wall + 90_000)])
        #expect(toggled.state == .counting && toggled.elapsedMs == 90_000)
    }

    @Test("a Start in the past overlapping an ended interval of the same name is refused, and creates nothing")
    func overlapWithHistoryRefused() throws {
        let f = fixture()
        _ = f.reply("Start", ["name": .string("work")])
        pass(f, .seconds(60))
        _ = f.reply("Remove", ["name": .string("work")])   // its interval: [wall, wall + 60 s)
        pass(f, .seconds(60))
        let saves = f.saves.count
        let refused = try #require(refusal(f, "Start", ["name": .string("work"), "at_ms": .int(Self.wall + 30_000)]))
        #expect(refused.name == VarlinkError.invalidIntervalName)
        #expect(refused.reason.contains("from \(UTCTime.text(Self.wall + 60_000)) to now"))
        #expect(f.saves.count == saves)
        #expect(f.reply("List")?["stopwatches"] == .array([]))
        // Another name may overlap it: stopwatches run side by side.
        #expect(f.stopwatch("Start", "other")?.state == .counting)
        let after = try stopwatch(f, "Start", ["name": .string("work"), "at_ms": .int(Self.wall + 60_000)])
        #expect(after.elapsedMs == 60_000)
    }

    @Test("an instant given as the very millisecond of the latest stop is taken, whatever the clocks' fractions")
    func sameMillisecondAsLatestStop() throws {
        let f = fixture()
        _ = f.reply("Start", ["name": .string("work")])
        pass(f, .seconds(60))
        _ = try stopwatch(f, "Stop", ["name": .string("work"), "at_ms": .int(Self.wall + 30_000)])
        // The wall clock gains half a millisecond on the stopwatch's.
        f.wallClock.advance(by: 1)
        f.time.advance(by: .microseconds(500))
        let resumed = try stopwatch(f, "Start", ["name": .string("work"), "at_ms": .int(Self.wall + 30_000)])
        #expect(resumed.state == .counting && resumed.elapsedMs == 60_000)
        // A whole millisecond before it is still refused.
        _ = f.reply("Stop", ["name": .string("work")])
        #expect(refusal(f, "Start", ["name": .string("work"), "at_ms": .int(Self.wall + 60_000)])?.name == VarlinkError.invalidIntervalName)
    }

    @Test("a Stop before a lap, or before the interval's start, is refused")
    func stopBeforeLapRefused() throws {
        let f = fixture()
        _ = f.reply("Start", ["name": .string("work")])
        pass(f, .seconds(60))
        _ = f.reply("Lap", ["name": .string("work")])
        pass(f, .seconds(60))
        let saves = f.saves.count
        let beforeLap = try #require(refusal(f, "Stop", ["name": .string("work"), "at_ms": .int(Self.wall + 59_000)]))
        #expect(beforeLap.name == VarlinkError.invalidIntervalName)
        #expect(beforeLap.reason.contains("from \(UTCTime.text(Self.wall + 60_000))"))
        let beforeStart = try #require(refusal(f, "Toggle", ["name": .string("work"), "at_ms": .int(Self.wall - 1000)]))
        #expect(beforeStart.name == VarlinkError.invalidIntervalName)
        #expect(f.saves.count == saves)
        #expect(f.stopwatch("Get", "work")?.state == .counting)
        #expect(f.events.map(\.event) == [.start, .lap])
    }

    @Test("a stopwatch that skips sleep: at_ms after a suspend is checked on the wall clock's time, stops before the sleep, starts after it")
    func skipSleepAcrossSuspend() throws {
        let f = fixture()
        _ = f.reply("SetCountsSleep", ["name": .string("work"), "counts_sleep": .bool(false)])
        _ = f.reply("Start", ["name": .string("work")])   // "09:00"
        pass(f, .seconds(31_200))                            // lid closed at "17:40"
        f.time.suspend(for: .seconds(54_000))                // 15 hours asleep
        f.wallClock.advance(by: 54_000_000)
        pass(f, .seconds(1200))                              // 20 minutes awake
        // "I stopped at 17:30, then closed the lid": 8 h 30 min counted, none of the night.
        let stopped = try stopwatch(f, "Stop", ["name": .string("work"), "at_ms": .int(Self.wall + 30_600_000)])
        #expect(stopped.state == .pause && stopped.elapsedMs == 30_600_000)
        let interval = try #require(f.historyIntervals(["name": .string("work")]).last)
        #expect(interval.startMs == Self.wall && interval.endMs == Self.wall + 30_600_000 && interval.elapsedMs == 30_600_000)
        // "I slept, then started 10 minutes ago": those 10 minutes count.
        let now = Self.wall + 86_400_000
        let started = try stopwatch(f, "Start", ["name": .string("work"), "at_ms": .int(now - 600_000)])
        #expect(started.state == .counting && started.elapsedMs == 31_200_000)
        // Before that start: refused, and the range it names is true.
        let refused = try #require(refusal(f, "Stop", ["name": .string("work"), "at_ms": .int(now - 700_000)]))
        #expect(refused.name == VarlinkError.invalidIntervalName)
        #expect(refused.reason.contains("from \(UTCTime.text(now - 600_000)) to now, \(UTCTime.text(now))"))
        let stoppedAgain = try stopwatch(f, "Stop", ["name": .string("work"), "at_ms": .int(now - 300_000)])
        #expect(stoppedAgain.elapsedMs == 30_900_000)
    }

    @Test("at_ms more than 366 days ago is refused with the range, like Track's longest interval")
    func moreThan366DaysAgoRefused() throws {
        let f = fixture()
        let earliest = Self.wall - 366 * 86_400_000
        let refused = try #require(refusal(f, "Start", ["name": .string("work"), "at_ms": .int(earliest - 1)]))
        #expect(refused.name == VarlinkError.invalidIntervalName)
        #expect(refused.reason.contains("from \(UTCTime.text(earliest)) to now, \(UTCTime.text(Self.wall))"))
        #expect(f.reply("List")?["stopwatches"] == .array([]))
        let oldest = try stopwatch(f, "Start", ["name": .string("work"), "at_ms": .int(earliest)])
        #expect(oldest.elapsedMs == 366 * 86_400_000)
    }

    @Test("a stop event carries the note of the interval it ended, for the hooks' STOPWATCHD_NOTE")
    func stopEventCarriesEndedNote() throws {
        let f = fixture()
        _ = f.reply("Start", ["name": .string("work"), "note": .string("the report")])
        pass(f, .seconds(10))
        _ = f.reply("Stop", ["name": .string("work")])
        let stop = try #require(f.events.last)
        #expect(stop.event == .stop && stop.update.stopwatch.note == nil)
        #expect(HookEnvironment.variables(for: stop).contains { $0.name == "STOPWATCHD_NOTE" && $0.value == "the report" })
        // Through the outbox's line too (a run that waits across a restart).
        let line = OutboxLine.run(OutboxRun(number: 1, atMs: 5, lateMs: 0, update: stop.update, endedNote: stop.endedNote))
        #expect(try OutboxLine(decoding: line.bytes.dropLast()[...]) == line)
        _ = f.reply("Start", ["name": .string("work")])
        _ = f.reply("Stop", ["name": .string("work")])
        #expect(f.events.last.map { HookEnvironment.variables(for: $0).contains { $0.name == "STOPWATCHD_NOTE" } } == false)
    }

    @Test("UTCTime names any millisecond, Int64.min and Int64.max included, without trapping")
    func utcTimeOfExtremes() {
        #expect(UTCTime.text(0) == "1970-01-01 00:00:00 UTC")
        #expect(UTCTime.text(-1) == "1969-12-31 23:59:59 UTC")
        #expect(UTCTime.text(Self.wall) == "2023-11-14 22:13:20 UTC")
        #expect(UTCTime.text(Int64.min).hasSuffix("UTC") && UTCTime.text(Int64.min).hasPrefix("-"))
        #expect(UTCTime.text(Int64.max).hasSuffix("UTC"))
    }

    @Test("wrong types of at_ms and note are InvalidParameter; so are notes of 1,025 scalars or a newline")
    func parameterRules() throws {
        let f = fixture()
        #expect(f.error("Start", ["name": .string("work"), "at_ms": .string("yesterday")]) == "org.varlink.service.InvalidParameter")
        #expect(f.error("Stop", ["name": .string("work"), "at_ms": .bool(true)]) == "org.varlink.service.InvalidParameter")
        #expect(f.error("Start", ["name": .string("work"), "note": .int(3)]) == "org.varlink.service.InvalidParameter")
        #expect(f.error("Start", ["name": .string("work"), "note": .string(String(repeating: "é", count: 1025))]) == "org.varlink.service.InvalidParameter")
        #expect(f.error("Toggle", ["name": .string("work"), "note": .string("two\nlines")]) == "org.varlink.service.InvalidParameter")
        #expect(f.error("Start", ["name": .string("work"), "note": .string("")]) == "org.varlink.service.InvalidParameter")
        #expect(f.saves.isEmpty)
        #expect(f.reply("List")?["stopwatches"] == .array([]))
        let longest = String(repeating: "é", count: 1024)
        let started = try stopwatch(f, "Start", ["name": .string("work"), "note": .string(longest)])
        #expect(started.note == longest)
    }

    @Test("a note goes with the counting interval: in replies, events and the saved state; a resume without one has none")
    func noteFollowsTheInterval() throws {
        let f = fixture()
        let started = try stopwatch(f, "Start", ["name": .string("work"), "note": .string("the report")])
        #expect(started.note == "the report")
        #expect(f.events.last?.update.stopwatch.note == "the report")
        pass(f, .seconds(10))
        let stopped = try stopwatch(f, "Stop", ["name": .string("work")])
        #expect(stopped.note == nil)
        let resumed = try stopwatch(f, "Start", ["name": .string("work")])
        #expect(resumed.state == .counting && resumed.note == nil)
        // The saved snapshot carries it too, for a restart.
        _ = f.reply("Stop", ["name": .string("work")])
        _ = f.reply("Toggle", ["name": .string("work"), "note": .string("again")])
        #expect(f.saves.last?.snapshot?.note == "again")
    }

    @Test("SetCountsSleep creates the stopwatch, is saved, replies counts_sleep false, and leaves sleep out from then")
    func setCountsSleep() throws {
        let f = fixture()
        let watch = try #require(f.watch("work"))
        defer { watch.stream.cancel() }
        let set = try #require(f.reply("SetCountsSleep", ["name": .string("work"), "counts_sleep": .bool(false)]))
        #expect(set["stopwatch"].flatMap { if case .object(let o) = $0 { o["counts_sleep"] } else { nil } } == .bool(false))
        #expect(f.saves.last?.snapshot?.countsSleep == false)
        #expect(f.saves.last?.name == "work")
        _ = f.reply("Start", ["name": .string("work")])
        pass(f, .seconds(10))
        f.time.suspend(for: .seconds(3600))
        f.wallClock.advance(by: 3_600_000)
        pass(f, .seconds(5))
        let stopped = try stopwatch(f, "Stop", ["name": .string("work")])
        #expect(stopped.elapsedMs == 15_000 && !stopped.countsSleep)
        // Its interval: wall-clock ends, elapsed without the sleep.
        let interval = try #require(f.historyIntervals(["name": .string("work")]).last)
        #expect(interval.elapsedMs == 15_000)
        #expect(interval.endMs == Self.wall + 3_615_000)
        #expect(interval.startMs == Self.wall, "its wall-clock start, the sleep between its ends")
        // Set again to the same: no change, no save, no event.
        let saves = f.saves.count
        _ = f.reply("SetCountsSleep", ["name": .string("work"), "counts_sleep": .bool(false)])
        #expect(f.saves.count == saves)
        let back = try stopwatch(f, "SetCountsSleep", ["name": .string("work"), "counts_sleep": .bool(true)])
        #expect(back.countsSleep && back.elapsedMs == 15_000)
        func events() -> [WatchEvent] { watch.updates.withLock { $0.map(\.event).filter { $0 != .tick } } }
        f.settle { events().count >= 5 }
        // Watchers: each change of the setting is told, as `target`.
        #expect(events() == [.current, .target, .start, .stop, .target])
        #expect(f.error("SetCountsSleep", ["name": .string("work")]) == "org.varlink.service.InvalidParameter")
        #expect(f.error("SetCountsSleep", ["name": .string("work"), "counts_sleep": .int(0)]) == "org.varlink.service.InvalidParameter")
    }

    @Test("a countdown that skips sleep expires after its target of awake time, on the awake clock's timer")
    func awakeCountdownExpiry() throws {
        let f = fixture()
        _ = f.reply("SetCountsSleep", ["name": .string("tea"), "counts_sleep": .bool(false)])
        _ = f.reply("Countdown", ["name": .string("tea"), "target_ms": .int(60_000)])
        #expect(f.queue.sync { f.stopwatches.expiries.count } == 1)
        f.time.advance(by: .seconds(30))
        f.time.suspend(for: .seconds(600))
        f.settle()
        #expect(!f.events.map(\.event).contains(.expired))
        f.time.advance(by: .seconds(29))
        f.settle()
        #expect(!f.events.map(\.event).contains(.expired))
        f.time.advance(by: .seconds(1))
        f.settle { f.events.map(\.event).contains(.expired) }
        let expired = try #require(f.events.last)
        #expect(expired.event == .expired && expired.update.stopwatch.elapsedMs == 60_000)
        #expect(expired.late == .zero)
    }

    @Test("countdowns on both clocks: one timer per clock, however many; a switch of clocks moves a pending expiry")
    func oneTimerPerClock() throws {
        let f = fixture()
        for index in 0..<5 {
            _ = f.reply("Countdown", ["name": .string("boot \(index)"), "target_ms": .int(60_000)])
            _ = f.reply("SetCountsSleep", ["name": .string("awake \(index)"), "counts_sleep": .bool(false)])
            _ = f.reply("Countdown", ["name": .string("awake \(index)"), "target_ms": .int(60_000)])
        }
        #expect(f.queue.sync { f.stopwatches.expiries.count } == 10)
        // (open.json's window waits on the same manual clock: its timer is not an expiry's.)
        #expect(f.time.timersMade - f.openIntervalsTimers.timersMade == 2)
        // One boot countdown switched to the awake clock: its expiry waits for awake time.
        _ = f.reply("SetCountsSleep", ["name": .string("boot 0"), "counts_sleep": .bool(false)])
        #expect(f.queue.sync { f.stopwatches.expiries.count } == 10)
        f.time.suspend(for: .seconds(600))
        f.settle { f.events.filter { $0.event == .expired }.count >= 4 }
        let expiredInSleep = Set(f.events.filter { $0.event == .expired }.map(\.name))
        #expect(expiredInSleep == ["boot 1", "boot 2", "boot 3", "boot 4"])
        f.time.advance(by: .seconds(60))
        f.settle { f.events.filter { $0.event == .expired }.count >= 10 }
        #expect(f.events.filter { $0.event == .expired }.count == 10)
        #expect(f.time.timersMade - f.openIntervalsTimers.timersMade == 2)
    }

    @Test("a told expiry of a countdown that skips sleep is matched across a restart by its awake-clock instant")
    func toldAwakeExpiryAcrossRestart() throws {
        // Both skip sleep, counting since 100 s awake with 60 s targets: due at 160 s awake.
        // Restarted at 170 s awake, after 600 s asleep: the boot clock reads 770 s.
        let due = StopWatchSnapshot.counting(since: .seconds(100), now: .seconds(170), target: .seconds(60), countsSleep: false)
        let f = StopwatchServiceFixture(
            now: .seconds(170), asleep: .seconds(600),
            restored: [("told", due), ("untold", due), ("boot instant", due)],
            toldBeforeRestart: [
                ToldExpiry(name: "told", instant: .seconds(160)),
                // The same moment on the boot clock is not this countdown's instant.
                ToldExpiry(name: "boot instant", instant: .seconds(760)),
            ]
        )
        #expect(f.time.awakeNow() == .seconds(170) && f.time.now() == .seconds(770))
        #expect(f.saves.map(\.name) == ["told"] && f.saves.first?.snapshot?.hasExpired == true)
        f.time.fireDueTimers()
        f.settle { f.events.count >= 2 }
        #expect(f.events.map(\.name).sorted() == ["boot instant", "untold"])
        #expect(f.events.allSatisfy { $0.event == .expired && $0.late == .seconds(10) })
    }

    @Test("a countdown started in the past whose instant has passed expires at once, late")
    func countdownStartedInThePast() throws {
        let logged = Locked<[String]>([])
        let f = StopwatchServiceFixture(now: .seconds(1000), historyDirectory: root, wallClock: ManualWallClock(Self.wall), logged: logged)
        _ = f.reply("SetTarget", ["name": .string("tea"), "target_ms": .int(60_000)])
        _ = f.reply("Start", ["name": .string("tea"), "at_ms": .int(Self.wall - 90_000)])
        // Its instant is past: the timer is armed for it, and fires at once.
        f.time.fireDueTimers()
        f.settle { f.events.map(\.event).contains(.expired) }
        let expired = try #require(f.events.last)
        #expect(expired.event == .expired)
        #expect(expired.late == .seconds(30))
        // Logged as late because it was started in the past, not because the daemon was away.
        #expect(logged.withLock { $0.contains { $0.contains("expired 30s ago (it was started in the past") } }, "\(logged.withLock { $0 })")
    }
}

/// What a state file keeps of the new fields, and that files without them load as before.
@Suite("persistence: sleep, notes, the latest stop")
struct StopwatchRecordAmendTests {
    let saved = ClockReading(boot: .seconds(1000), awake: .seconds(400), wall: .seconds(1_700_000_000), bootID: "boot-a")

    @Test("a stopwatch that skips sleep, with a note, is restored exactly in the same boot, on the awake clock")
    func awakeCountingRestoredExactly() throws {
        let snapshot = StopWatchSnapshot.counting(
            since: .seconds(380), now: .seconds(400), countsSleep: false, note: "deep work", intervalStartBoot: .seconds(980)
        )
        let record = StopwatchRecord(name: "work", snapshot: snapshot, at: saved)
        let text = String(decoding: record.serialized, as: UTF8.self)
        #expect(text.contains(#""counts_sleep":false"#) && text.contains(#""origin_awake_ns":380000000000"#))
        #expect(text.contains(#""note":"deep work""#))
        let read = try StopwatchRecord(json: JSONParser.parse(record.serialized))
        #expect(read == record)
        // Later in the same boot, after an hour's suspend: the awake clock moved 50 s.
        let later = ClockReading(boot: .seconds(4650), awake: .seconds(450), wall: .seconds(1_700_003_650), bootID: "boot-a")
        let restored = read.snapshot(restoredAt: later)
        #expect(!restored.countsSleep && restored.note == "deep work")
        #expect(restored.elapsed(at: later.instant) == .seconds(70))
        // Its counting interval began 20 s before it was saved, on the wall clock too.
        #expect(read.intervalStartWall == .seconds(1_699_999_980))
        #expect(restored.intervalStartBoot == later.boot - .seconds(3670))
        // After a reboot: from the wall clock, as any stopwatch.
        let rebooted = ClockReading(boot: .seconds(10), awake: .seconds(10), wall: .seconds(1_700_003_650), bootID: "boot-b")
        #expect(read.snapshot(restoredAt: rebooted).elapsed(at: rebooted.instant) == .seconds(3670))
    }

    @Test("a paused one keeps when it was stopped, so a start in the past cannot precede it after a restart")
    func pausedKeepsItsStop() throws {
        let snapshot = StopWatchSnapshot.paused(at: .seconds(30), latestTransition: .seconds(990))
        let record = StopwatchRecord(name: "work", snapshot: snapshot, at: saved)
        #expect(record.latestTransitionWall == .seconds(1_699_999_990))
        let later = ClockReading(boot: .seconds(1100), awake: .seconds(500), wall: .seconds(1_700_000_100), bootID: "boot-a")
        let restored = try StopwatchRecord(json: JSONParser.parse(record.serialized)).snapshot(restoredAt: later)
        #expect(restored.pausedAt == .seconds(990))
        #expect(throws: InvalidTransition.self) {
            try restored.applying(.transition(.start, ago: .seconds(111), note: nil), at: later.instant)
        }
    }

    @Test("a paused one restored in the same boot after a step of the wall clock keeps its latest stop, from the boot clock")
    func pausedStopSurvivesWallStep() throws {
        let snapshot = StopWatchSnapshot.paused(at: .seconds(30), latestTransition: .seconds(990))
        let record = StopwatchRecord(name: "work", snapshot: snapshot, at: saved)
        #expect(record.latestTransitionBoot == .seconds(990) && record.bootID == "boot-a")
        // 100 s later, the wall clock set back an hour meanwhile.
        let stepped = ClockReading(boot: .seconds(1100), awake: .seconds(500), wall: .seconds(1_699_996_500), bootID: "boot-a")
        let restored = try StopwatchRecord(json: JSONParser.parse(record.serialized)).snapshot(restoredAt: stepped)
        #expect(restored.pausedAt == .seconds(990) && restored.pausedAtBoot == .seconds(990))
        // After a reboot: from the wall clock.
        let rebooted = ClockReading(boot: .seconds(50), wall: .seconds(1_700_000_040), bootID: "boot-b")
        let afterReboot = try StopwatchRecord(json: JSONParser.parse(record.serialized)).snapshot(restoredAt: rebooted)
        #expect(afterReboot.pausedAt == .seconds(0))
    }

    @Test("a state file without the new fields loads as it did: counts sleep, no note, no latest stop")
    func oldFileLoads() throws {
        let written = [
            #"{"format":1,"name":"p","state":"pause","elapsed_ns":1500000000,"laps_ns":[1000000000]}"#,
            #"{"format":1,"name":"c","state":"counting","elapsed_ns":5000000000,"laps_ns":[],"boot_id":"boot-a","origin_boot_ns":995000000000,"origin_wall_ns":1699999995000000000}"#,
        ]
        let restored = try written.map { try StopwatchRecord(json: JSONParser.parse($0)).snapshot(restoredAt: saved) }
        #expect(restored.allSatisfy { $0.countsSleep && $0.note == nil })
        #expect(restored[0].pausedAt == nil)
        #expect(restored[1].elapsed(at: saved.instant) == .seconds(5))
        // And a plain stopwatch's file is still what they wrote.
        let plain = StopwatchRecord(name: "p", snapshot: .paused(at: .seconds(1)), at: saved)
        #expect(!String(decoding: plain.serialized, as: UTF8.self).contains("counts_sleep"))
    }

    @Test("bad values of the new fields are bad content")
    func badFields() {
        let base = #"{"format":1,"name":"c","state":"counting","elapsed_ns":5000000000,"laps_ns":[],"boot_id":"boot-a","origin_boot_ns":995000000000,"origin_wall_ns":1699999995000000000"#
        for extra in [#","counts_sleep":"no""#, #","note":"a\nb""#, #","note":5"#, #","transition_wall_ns":-1"#, #","origin_awake_ns":"x""#] {
            #expect(throws: MalformedMessage.self) { try StopwatchRecord(json: JSONParser.parse(Array((base + extra + "}").utf8))) }
        }
        let future = try? StopwatchRecord(json: JSONParser.parse(Array((base + #","counts_sleep":false,"origin_awake_ns":900000000000}"#).utf8)))
        #expect(throws: MalformedMessage.self) { try future?.checkRange(at: saved) }
    }
}
