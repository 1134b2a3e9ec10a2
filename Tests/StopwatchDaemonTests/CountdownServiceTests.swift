import Dispatch
import LinuxSystem
import StopWatchCore
@testable import StopwatchDaemon
import StopwatchProtocol
import StopWatchTesting
import Testing
import Varlink

/// Countdowns through the service on manual time: SetTarget and Countdown, expiries on one
/// boot-clock timer, exactly once, across a restart too.
@Suite("countdowns in the service")
struct CountdownServiceTests {
    static func parameters(_ name: String, _ target: JSONValue?) -> JSONObject {
        var parameters: JSONObject = ["name": .string(name)]
        if let target { parameters["target_ms"] = target }
        return parameters
    }

    @Test("target_ms outside 1 ms … 366 days, or not an integer: InvalidParameter, nothing created or saved", arguments: [
        JSONValue.int(0), .int(-1), .int(366 * 86_400_000 + 1), .int(.max), .double(1.5), .string("25m"), .bool(true),
    ])
    func badTargets(target: JSONValue) {
        let fixture = StopwatchServiceFixture()
        #expect(fixture.error("Countdown", Self.parameters("tea", target)) == "org.varlink.service.InvalidParameter")
        #expect(fixture.error("SetTarget", Self.parameters("tea", target)) == "org.varlink.service.InvalidParameter")
        #expect(fixture.saves.isEmpty)
        #expect(fixture.stopwatch("Get", "tea") == Stopwatch(name: "tea", state: .stopped, elapsedMs: 0))
    }

    @Test("Countdown needs a target; SetTarget's null or absent one makes a plain stopwatch")
    func targetPresence() throws {
        let fixture = StopwatchServiceFixture()
        #expect(fixture.error("Countdown", Self.parameters("tea", nil)) == "org.varlink.service.InvalidParameter")
        #expect(fixture.error("Countdown", Self.parameters("tea", .null)) == "org.varlink.service.InvalidParameter")
        let longest = fixture.reply("Countdown", Self.parameters("tea", .int(366 * 86_400_000)))?["stopwatch"]
        #expect(try Stopwatch(json: try #require(longest)).targetMs == 366 * 86_400_000)
        let plain = fixture.reply("SetTarget", Self.parameters("tea", .null))?["stopwatch"]
        #expect(try Stopwatch(json: try #require(plain)).targetMs == nil)
        #expect(fixture.reply("SetTarget", Self.parameters("tea", nil)) != nil)
    }

    @Test("Countdown from any state starts anew; SetTarget keeps state, elapsed and laps, and creates")
    func commands() throws {
        let fixture = StopwatchServiceFixture(now: .seconds(100))
        _ = fixture.stopwatch("Start", "tea")
        fixture.time.move(by: .seconds(3))
        _ = fixture.stopwatch("Lap", "tea")
        let reminded = try Stopwatch(json: try #require(fixture.reply("SetTarget", Self.parameters("tea", .int(7_200_000)))?["stopwatch"]))
        #expect(reminded == Stopwatch(name: "tea", state: .counting, elapsedMs: 3000, lapsMs: [3000], targetMs: 7_200_000))
        let countdown = try Stopwatch(json: try #require(fixture.reply("Countdown", Self.parameters("tea", .int(240_000)))?["stopwatch"]))
        #expect(countdown == Stopwatch(name: "tea", state: .counting, elapsedMs: 0, lapsMs: [], targetMs: 240_000))
        let created = try Stopwatch(json: try #require(fixture.reply("SetTarget", Self.parameters("new", .int(1000)))?["stopwatch"]))
        #expect(created == Stopwatch(name: "new", state: .stopped, elapsedMs: 0, targetMs: 1000))
        #expect(fixture.saves.map(\.name) == ["tea", "tea", "tea", "tea", "new"])
        #expect(fixture.events.map(\.event) == [.start, .lap, .target, .start, .target])
    }

    @Test("an expiry is saved and told once, at its instant, on one boot-clock timer; a watcher sees start, ticks, expired")
    func expiresOnce() throws {
        let fixture = StopwatchServiceFixture(now: .seconds(100))
        let (stream, updates) = try #require(fixture.watch("tea"))
        _ = fixture.reply("Countdown", Self.parameters("tea", .int(2500)))
        fixture.time.advance(by: .seconds(5))
        let expected: [WatchEvent] = [.current, .start, .tick, .tick, .expired, .tick, .tick, .tick]
        fixture.settle { updates.withLock { $0.map(\.event) } == expected }
        #expect(updates.withLock { $0.map(\.event) } == expected)
        let expired = try #require(updates.withLock { $0 }.first { $0.event == .expired })
        #expect(expired.stopwatch.elapsedMs == 2500, "at its instant, between the ticks")
        #expect(fixture.events.map(\.event) == [.start, .expired])
        #expect(fixture.events.last?.late == .zero)
        #expect(fixture.saves.last?.snapshot?.hasExpired == true)
        // One boot timer for the daemon's life; nothing waits for it now.
        #expect(fixture.time.timers.filter { $0.clock == .boot }.count == 1)
        #expect(fixture.queue.sync { fixture.stopwatches.expiries.count } == 0)
        fixture.queue.sync { stream.cancel() }
    }

    @Test("a target set at or below the elapsed time of a counting stopwatch expires at once; paused, it never does")
    func targetBelowElapsed() throws {
        let fixture = StopwatchServiceFixture(now: .seconds(100))
        _ = fixture.stopwatch("Start", "run")
        _ = fixture.stopwatch("Start", "paused")
        fixture.time.move(by: .seconds(10))
        _ = fixture.stopwatch("Stop", "paused")
        _ = fixture.reply("SetTarget", Self.parameters("run", .int(10_000)))
        _ = fixture.reply("SetTarget", Self.parameters("paused", .int(5_000)))
        fixture.time.fireDueTimers()
        #expect(fixture.events.map { "\($0.name) \($0.event)" } == [
            "run start", "paused start", "paused stop", "run target", "paused target", "run expired",
        ])
        // Resumed past its target, the paused one is due at once.
        _ = fixture.stopwatch("Start", "paused")
        fixture.time.fireDueTimers()
        #expect(fixture.events.last.map { "\($0.name) \($0.event)" } == "paused expired")
    }

    @Test("a thousand countdowns at one instant: each expires once, in turns of the queue")
    func manyAtOnce() throws {
        let fixture = StopwatchServiceFixture(maximumStopwatches: 2000, now: .seconds(100))
        for index in 0..<1000 { _ = fixture.reply("Countdown", Self.parameters("c\(index)", .int(1000))) }
        #expect(fixture.queue.sync { fixture.stopwatches.expiries.count } == 1000)
        fixture.time.advance(by: .seconds(1))
        #expect(fixture.settle { fixture.events.count { $0.event == .expired } == 1000 })
        #expect(Set(fixture.events.filter { $0.event == .expired }.map(\.name)).count == 1000)
        #expect(fixture.time.timers.filter { $0.clock == .boot }.count == 1)
    }

    @Test("an expiry that fell while the daemon was down is told once at start, with how late; never again after")
    func acrossRestart() throws {
        let bootID = "boot-1"
        func clocks(_ boot: Duration) -> ClockReading { ClockReading(boot: boot, wall: .seconds(1_700_000_000) + boot, bootID: bootID) }
        func reload(_ snapshot: StopWatchSnapshot, savedAt: Duration, restoredAt: Duration) throws -> StopWatchSnapshot {
            let json = StopwatchRecord(name: "tea", snapshot: snapshot, at: clocks(savedAt)).json
            return try StopwatchRecord(json: json).snapshot(restoredAt: clocks(restoredAt))
        }

        let first = StopwatchServiceFixture(now: .seconds(1000))
        _ = first.reply("Countdown", Self.parameters("tea", .int(60_000)))
        let saved = try #require(first.saves.last?.snapshot)
        // Killed at 1,010 s; started again at 1,100 s: the countdown fell at 1,060 s.
        let second = StopwatchServiceFixture(now: .seconds(1100), restored: [("tea", try reload(saved, savedAt: .seconds(1010), restoredAt: .seconds(1100)))])
        second.time.fireDueTimers()
        #expect(second.events.map(\.event) == [.expired])
        #expect(second.events.first?.late == .seconds(40))
        #expect(second.events.first?.update.stopwatch.elapsedMs == 100_000)
        let expired = try #require(second.saves.last?.snapshot)
        #expect(expired.hasExpired)
        // And again: nothing is told twice.
        let third = StopwatchServiceFixture(now: .seconds(1200), restored: [("tea", try reload(expired, savedAt: .seconds(1100), restoredAt: .seconds(1200)))])
        third.time.fireDueTimers()
        #expect(third.events.isEmpty)
        #expect(third.queue.sync { third.stopwatches.expiries.count } == 0)
        #expect(third.stopwatch("Get", "tea")?.elapsedMs == 200_000, "overtime counts on")
    }

    @Test("late expiries are logged a line each for a few, and in one line for a burst", arguments: [2, 3, 4, 500])
    func lateExpiriesLogged(count: Int) throws {
        func clocks(_ boot: Duration) -> ClockReading { ClockReading(boot: boot, wall: .seconds(1_700_000_000) + boot, bootID: "boot-1") }
        let first = StopwatchServiceFixture(maximumStopwatches: 1000, now: .seconds(1000))
        for index in 0..<count { _ = first.reply("Countdown", Self.parameters("c\(index)", .int(60_000 + Int64(index) * 10))) }
        let restored = try first.saves.suffix(count).map { save in
            let json = StopwatchRecord(name: save.name, snapshot: try #require(save.snapshot), at: clocks(.seconds(1010))).json
            return (name: save.name, snapshot: try StopwatchRecord(json: json).snapshot(restoredAt: clocks(.seconds(1100))))
        }
        let logged = Locked<[String]>([])
        let second = StopwatchServiceFixture(maximumStopwatches: 1000, now: .seconds(1100), restored: restored, logged: logged)
        second.time.fireDueTimers()
        #expect(second.events.filter { $0.event == .expired }.count == count, "each is told")
        let lines = logged.withLock { $0 }.filter { $0.contains("expired") }.map { $0.trimmingSuffix("\n") }
        if count <= 3 {
            #expect(lines.count == count, "\(lines)")
            #expect(lines.allSatisfy { $0.contains("countdown 'c") && $0.hasSuffix("ago (stopwatchd was not running, the system was suspended, or stopwatchd was busy); told now") }, "\(lines)")
            #expect(lines.first == "stopwatchd: info: countdown 'c0' expired 40s ago (stopwatchd was not running, the system was suspended, or stopwatchd was busy); told now", "whole seconds")
        } else {
            // One line for each batch the expiry scheduler hands over (256 at most).
            #expect(lines.count == (count + 255) / 256, "\(lines)")
            let counts = lines.compactMap { line in
                line.split(separator: " ").dropFirst(2).first.flatMap { Int($0) }
            }
            #expect(counts.reduce(0, +) == count, "\(lines)")
            #expect(lines.first?.contains(" countdowns expired up to 40s ago (stopwatchd was not running, the system was suspended, or stopwatchd was busy); told now: 'c0', 'c1', 'c2' and ") == true, "\(lines)")
            if count == 4 {
                #expect(lines == ["stopwatchd: info: 4 countdowns expired up to 40s ago (stopwatchd was not running, the system was suspended, or stopwatchd was busy); told now: 'c0', 'c1', 'c2' and 1 more"])
            }
            #expect(lines.allSatisfy { $0.hasSuffix(" more") }, "\(lines)")
        }
    }

    @Test("Remove tells the hooks removed, with the stopwatch as a new one reads, and drops its expiry")
    func remove() throws {
        let fixture = StopwatchServiceFixture()
        _ = fixture.reply("Countdown", Self.parameters("tea", .int(1000)))
        _ = fixture.reply("Remove", ["name": .string("tea")])
        #expect(fixture.events.last?.update == WatchUpdate(stopwatch: Stopwatch(name: "tea", state: .stopped, elapsedMs: 0), event: .removed))
        #expect(fixture.queue.sync { fixture.stopwatches.expiries.count } == 0)
        fixture.time.advance(by: .seconds(2))
        #expect(!fixture.events.contains { $0.event == .expired })
    }

    @Test("through a suspend the expiry fires at resume, on the boot timer; a monotonic timer would fire an hour late")
    func acrossSuspend() throws {
        let fixture = StopwatchServiceFixture(now: .seconds(1000))
        _ = fixture.reply("Countdown", Self.parameters("tea", .int(25 * 60_000)))
        fixture.time.advance(by: .seconds(5 * 60))
        fixture.time.suspend(for: .seconds(3600))
        fixture.settle()
        #expect(fixture.events.map(\.event) == [.start, .expired])
        #expect(fixture.events.last?.late == .seconds(40 * 60), "told at resume, with how late")
        #expect(fixture.events.last?.update.stopwatch.elapsedMs == Int64(65 * 60_000))
        #expect(fixture.saves.last?.snapshot?.hasExpired == true)
    }

    @Test("a command that reaches a countdown after its instant, before the timer's turn, expires it first")
    func commandAfterInstant() throws {
        let fixture = StopwatchServiceFixture(now: .seconds(100))
        for name in ["stop", "countdown", "remove", "reset-after-stop"] {
            _ = fixture.reply("Countdown", Self.parameters(name, .int(1000)))
        }
        // Past the instant; the timer's handler has not run (it would wait behind these).
        fixture.time.move(by: .seconds(2))
        let stopped = try #require(fixture.stopwatch("Stop", "stop"))
        #expect(stopped.state == .pause && stopped.elapsedMs == 2000)
        _ = fixture.reply("Countdown", Self.parameters("countdown", .int(5000)))
        _ = fixture.reply("Remove", ["name": .string("remove")])
        fixture.time.fireDueTimers()
        fixture.settle()
        let told = fixture.events.filter { $0.update.stopwatch.name != "reset-after-stop" }.map { "\($0.name) \($0.event)" }
        #expect(told == [
            "stop start", "countdown start", "remove start",
            "stop expired", "stop stop", "countdown expired", "countdown start", "remove expired", "remove removed",
        ])
        #expect(fixture.events.count { $0.name == "reset-after-stop" && $0.event == .expired } == 1, "and the timer's own, once")
    }

    @Test("a change and a Remove in one turn: watchers get the change, then removed; the removal is on disk first")
    func removeAfterChangeInOneTurn() throws {
        let fixture = StopwatchServiceFixture(now: .seconds(100))
        _ = fixture.reply("Countdown", Self.parameters("tea", .int(60_000)))
        let (stream, updates) = try #require(fixture.watch("tea"))
        fixture.settle { !updates.withLock { $0 }.isEmpty }
        let savedWhenToldRemoved = Locked<Bool?>(nil)
        fixture.queue.sync {
            _ = fixture.service.answer(VarlinkCall(method: "io.stopwatchd.Stop", parameters: ["name": .string("tea")]))
            _ = fixture.service.answer(VarlinkCall(method: "io.stopwatchd.Remove", parameters: ["name": .string("tea")]))
            if updates.withLock({ $0.last?.event }) == .removed {
                savedWhenToldRemoved.withLock { $0 = fixture.storage.saves.last.map { $0.name == "tea" && $0.snapshot == nil } }
            }
        }
        fixture.settle()
        #expect(updates.withLock { $0.map(\.event) } == [.current, .stop, .removed])
        #expect(savedWhenToldRemoved.withLock { $0 } == true)
        #expect(fixture.events.map(\.event) == [.start, .stop, .removed])
        fixture.queue.sync { stream.cancel() }
    }

    /// Watches `name`, calling `expired` with each `expired` update as its watcher receives it
    /// (on the queue); nil, recorded as an issue, when Watch gives no stream.
    static func watchExpired(
        _ name: String, in fixture: StopwatchServiceFixture, _ expired: @escaping @Sendable (WatchUpdate) -> Void
    ) -> (any VarlinkReplyStream)? {
        guard case .success(.stream(let stream)) = fixture.call("Watch", ["name": .string(name)], more: true) else {
            Issue.record("Watch gave no stream")
            return nil
        }
        fixture.queue.sync {
            stream.start {
                while case .message(let bytes)? = stream.next() {
                    guard let reply = try? VarlinkReply(json: JSONParser.parse(Array(bytes.dropLast()))),
                        let update = try? WatchUpdate(json: reply.parameters), update.event == .expired
                    else { continue }
                    expired(update)
                }
            }
        }
        return stream
    }

    @Test("a burst of expiries is recorded as told (the outbox), a batch at a time, before any watcher or hook hears of it")
    func burstRecordedBeforeTold() throws {
        let fixture = StopwatchServiceFixture(maximumStopwatches: 600, now: .seconds(100))
        let names = (0..<300).map { "c\($0)" }
        for name in names { _ = fixture.reply("Countdown", Self.parameters(name, .int(1000))) }
        // Each watcher notes, as it is told its expiry, whether it was recorded by then.
        let recordedWhenTold = Locked<[Bool]>([])
        var streams: [any VarlinkReplyStream] = []
        for name in names.prefix(20) + names.suffix(20) {
            guard let stream = Self.watchExpired(name, in: fixture, { _ in
                // On the queue, where the service tells.
                let recorded = fixture.told.expiries.contains { $0.name == name }
                recordedWhenTold.withLock { $0.append(recorded) }
            }) else { return }
            streams.append(stream)
        }
        fixture.settle()
        fixture.time.advance(by: .seconds(1))
        fixture.settle { recordedWhenTold.withLock { $0.count } == 40 }
        #expect(recordedWhenTold.withLock { $0 } == Array(repeating: true, count: 40))
        // One batch a turn (the scheduler hands over 256 at a time): each expiry with its
        // event, at its instant on the boot clock.
        let batches = fixture.batches.filter { !$0.expiries.isEmpty }
        #expect(batches.map(\.expiries.count) == [256, 44])
        #expect(batches.allSatisfy { $0.events.map(\.name) == $0.expiries.map(\.name) })
        #expect(fixture.toldExpiries.allSatisfy { $0.instant == .seconds(101) })
        fixture.queue.sync { for stream in streams { stream.cancel() } }
    }

    @Test("an expiry's watchers are written in the turn that tells it, on the thread the timer woke (the serving loop's), after the outbox recorded it")
    func watchersToldInTheSameTurn() throws {
        let fixture = StopwatchServiceFixture(now: .seconds(100))
        _ = fixture.reply("Countdown", Self.parameters("tea", .int(1000)))
        let told = Locked<[(thread: ThreadIdentity, recorded: Bool)]>([])
        guard let stream = Self.watchExpired("tea", in: fixture, { _ in
            let recorded = fixture.told.expiries.contains { $0.name == "tea" }
            told.withLock { $0.append((ThreadIdentity.current, recorded)) }
        }) else { return }
        fixture.settle()
        // The timer's handler runs in `queue.sync` from this thread (as the serving loop's
        // thread enters the queue): a delivery in a later turn would run on another thread.
        fixture.time.advance(by: .seconds(1))
        let here = ThreadIdentity.current
        let seen = told.withLock { $0 }
        #expect(seen.count == 1)
        #expect(seen.first?.thread == here)
        #expect(seen.first?.recorded == true)
        fixture.queue.sync { stream.cancel() }
    }

    @Test("an expiry the outbox says was told before a crash is recorded at the restart, not told again; another instant is told")
    func toldBeforeCrash() throws {
        // Both counting since 100 s with 60 s targets: due at 160 s; restarted at 170 s.
        let due = StopWatchSnapshot.counting(since: .seconds(100), now: .seconds(170), target: .seconds(60))
        let fixture = StopwatchServiceFixture(
            now: .seconds(170),
            restored: [("told", due), ("retold", due), ("untold", due)],
            toldBeforeRestart: [
                ToldExpiry(name: "told", instant: .seconds(160)),
                // Not this countdown's instant: a countdown set again since, say.
                ToldExpiry(name: "retold", instant: .seconds(150)),
                ToldExpiry(name: "gone", instant: .seconds(160)),
            ]
        )
        #expect(fixture.saves.map(\.name) == ["told"], "recorded and saved at once")
        #expect(fixture.saves.first?.snapshot?.hasExpired == true)
        fixture.time.fireDueTimers()
        fixture.settle()
        #expect(fixture.events.map(\.name).sorted() == ["retold", "untold"])
        #expect(fixture.events.allSatisfy { $0.event == .expired && $0.late == .seconds(10) })
        #expect(fixture.stopwatch("Get", "told")?.state == .counting, "overtime counts on")
    }

    @Test("a burst of expiries: every watcher is told before any of them is written")
    func burstToldBeforeSaved() throws {
        let fixture = StopwatchServiceFixture(now: .seconds(100))
        let names = (0..<40).map { "c\($0)" }
        for name in names { _ = fixture.reply("Countdown", Self.parameters(name, .int(1000))) }
        // Each watcher notes, as it is told its expiry, how many expiries were written by then.
        let writtenWhenTold = Locked<[Int]>([])
        var streams: [any VarlinkReplyStream] = []
        for name in names {
            guard case .success(.stream(let stream)) = fixture.call("Watch", ["name": .string(name)], more: true) else {
                Issue.record("Watch gave no stream")
                return
            }
            streams.append(stream)
            fixture.queue.sync {
                stream.start {
                    while case .message(let bytes)? = stream.next() {
                        guard let reply = try? VarlinkReply(json: JSONParser.parse(Array(bytes.dropLast()))),
                            (try? WatchUpdate(json: reply.parameters))?.event == .expired
                        else { continue }
                        // On the queue, where the storage is used.
                        let written = fixture.storage.saves.count { $0.snapshot?.hasExpired == true }
                        writtenWhenTold.withLock { $0.append(written) }
                    }
                }
            }
        }
        fixture.settle()
        fixture.time.advance(by: .seconds(1))
        fixture.settle { fixture.saves.count { $0.snapshot?.hasExpired == true } == names.count }
        #expect(writtenWhenTold.withLock { $0 } == Array(repeating: 0, count: names.count))
        #expect(fixture.saves.count { $0.snapshot?.hasExpired == true } == names.count)
        fixture.queue.sync { for stream in streams { stream.cancel() } }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
