import Dispatch
import LinuxSystem
import StopWatchCore
@testable import StopwatchDaemon
import StopwatchProtocol
import Testing
import Varlink

/// The io.stopwatchd methods on manual time: what each applies, saves and replies, without
/// a socket.
@Suite("stopwatch service")
struct StopwatchServiceTests {
    @Test("a command is applied, the snapshot it produced saved, then replied; Get saves nothing")
    func appliesSavesReplies() throws {
        let fixture = StopwatchServiceFixture()
        fixture.time.move(by: .seconds(5))
        let started = try #require(fixture.stopwatch("Start", "tea"))
        #expect(started.state == .counting && started.elapsedMs == 0)
        let saves = fixture.saves
        #expect(saves.map(\.name) == ["tea"])
        #expect(saves.first?.snapshot == StopWatchSnapshot.counting(since: .seconds(5), now: .seconds(5)))
        #expect(fixture.changeCount == 1)

        fixture.time.move(by: .milliseconds(1500))
        #expect(fixture.stopwatch("Get", "tea")?.elapsedMs == 1500)
        #expect(fixture.saves.count == 1)
        // Started again while counting: nothing changes, nothing is written.
        #expect(fixture.stopwatch("Start", "tea")?.state == .counting)
        #expect(fixture.saves.count == 1)

        let stopped = try #require(fixture.stopwatch("Stop", "tea"))
        #expect(stopped.state == .pause && stopped.elapsedMs == 1500)
        #expect(fixture.saves.last?.snapshot == .paused(at: .milliseconds(1500), latestTransition: .milliseconds(6500)))
        #expect(fixture.changeCount == 2)
    }

    @Test("a refused command saves nothing and says why; a name never started reads as stopped and stays uncreated")
    func refusals() throws {
        let fixture = StopwatchServiceFixture()
        _ = fixture.stopwatch("Start", "a")
        #expect(fixture.error("Reset", ["name": .string("a")]) == "io.stopwatchd.InvalidTransition")
        #expect(fixture.error("Lap", ["name": .string("never")]) == "io.stopwatchd.NoSuchStopwatch")
        #expect(fixture.stopwatch("Get", "never")?.state == .stopped)
        #expect(fixture.error("Start", ["name": .string("no/slash")]) == "io.stopwatchd.InvalidName")
        #expect(fixture.error("Start", ["name": .int(7)]) == "org.varlink.service.InvalidParameter")
        #expect(fixture.saves.map(\.name) == ["a"])
        let listed = fixture.reply("List")?["stopwatches"]
        #expect(listed.map { if case .array(let items) = $0 { items.count } else { -1 } } == 1)
    }

    @Test("Stop, Reset, Lap and Remove of a name never created (or removed) get NoSuchStopwatch naming it, and change, save and tell nothing",
          arguments: ["Stop", "Reset", "Lap", "Remove"])
    func noSuchStopwatch(method: String) throws {
        let fixture = StopwatchServiceFixture()
        _ = fixture.stopwatch("Start", "tea")
        _ = fixture.reply("Remove", ["name": .string("tea")])
        let (saves, changes, events) = (fixture.saves.count, fixture.changeCount, fixture.events.count)
        // Never created, removed, and a name that differs only in case (names are exact).
        for name in ["never", "tea", "Tea"] {
            guard case .failure(let error) = fixture.call(method, ["name": .string(name)]) else {
                Issue.record("\(method) '\(name)' was not refused")
                continue
            }
            #expect(error.name == "io.stopwatchd.NoSuchStopwatch")
            #expect(error.parameters == ["name": .string(name)])
        }
        // The default stopwatch too, when the name is left out (Remove requires one).
        if method != "Remove" { #expect(fixture.error(method) == "io.stopwatchd.NoSuchStopwatch") }
        #expect(fixture.saves.count == saves && fixture.changeCount == changes && fixture.events.count == events)
        #expect(fixture.reply("List")?["stopwatches"] == .array([]))
        // Get still reads a missing name as a new stopwatch (and creates nothing); Toggle creates one.
        #expect(fixture.stopwatch("Get", "never") == Stopwatch(name: "never", state: .stopped, elapsedMs: 0))
        #expect(fixture.stopwatch("Toggle", "never")?.state == .counting)
        #expect(fixture.error(method, ["name": .string("never")]) != "io.stopwatchd.NoSuchStopwatch")
    }

    @Test("limits: TooManyStopwatches at the stopwatch limit, TooManyLaps at the lap limit")
    func limits() throws {
        let fixture = StopwatchServiceFixture(maximumStopwatches: 2, maximumLaps: 2)
        _ = fixture.stopwatch("Start", "a")
        _ = fixture.stopwatch("Start", "b")
        #expect(fixture.error("Start", ["name": .string("c")]) == "io.stopwatchd.TooManyStopwatches")
        #expect(fixture.stopwatch("Lap", "a")?.lapsMs.count == 1)
        #expect(fixture.stopwatch("Lap", "a")?.lapsMs.count == 2)
        #expect(fixture.error("Lap", ["name": .string("a")]) == "io.stopwatchd.TooManyLaps")
        #expect(fixture.saves.count == 4)
    }

    @Test("Remove deletes the file (a nil save) and frees a slot; removing an unknown name is NoSuchStopwatch and saves nothing")
    func remove() throws {
        let fixture = StopwatchServiceFixture(maximumStopwatches: 1)
        _ = fixture.stopwatch("Start", "a")
        #expect(fixture.reply("Remove", ["name": .string("a")]) == [:])
        #expect(fixture.saves.count == 2 && fixture.saves.last?.name == "a" && fixture.saves.last?.snapshot == nil)
        #expect(fixture.error("Remove", ["name": .string("a")]) == "io.stopwatchd.NoSuchStopwatch")
        #expect(fixture.saves.count == 2)
        #expect(fixture.error("Remove") == "org.varlink.service.InvalidParameter")
        #expect(fixture.stopwatch("Start", "b")?.state == .counting)
    }

    @Test("Watch needs more; its stream gives the current state, then each change, and ends its watch when cancelled")
    func watch() throws {
        let fixture = StopwatchServiceFixture()
        #expect(fixture.error("Watch", ["name": .string("tea")]) == "org.varlink.service.ExpectedMore")
        guard case .success(.stream(let stream)) = fixture.call("Watch", ["name": .string("tea")], more: true) else {
            Issue.record("Watch gave no stream")
            return
        }
        let messages = Locked<[[UInt8]]>([])
        let arrived = DispatchSemaphore(value: 0)
        // Pulls everything the stream has each time it says it has something.
        let pullAll: () -> Void = {
            while case .message(let message)? = stream.next() {
                messages.withLock { $0.append(message) }
            }
            arrived.signal()
        }
        fixture.queue.sync { stream.start(ready: pullAll) }
        #expect(arrived.wait(timeout: .now() + .seconds(10)) == .success)
        _ = fixture.stopwatch("Start", "tea")
        #expect(arrived.wait(timeout: .now() + .seconds(10)) == .success)
        let states = try messages.withLock { try $0.map { message in
            let reply = try VarlinkReply(json: JSONParser.parse(Array(message.dropLast())))
            return try Stopwatch(json: reply.parameters["stopwatch"] ?? .null).state
        } }
        #expect(states == [.stopped, .counting])
        #expect(fixture.queue.sync { fixture.registry.watcherCount } == 1)
        fixture.queue.sync { stream.cancel() }
        #expect(fixture.queue.sync { fixture.registry.watcherCount } == 0)
        #expect(fixture.changeCount == 3)
    }
}
