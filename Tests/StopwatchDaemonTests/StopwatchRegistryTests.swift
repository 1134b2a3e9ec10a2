import Dispatch
import LinuxSystem
import StopWatchCore
@testable import StopwatchDaemon
import StopwatchProtocol
import StopWatchTesting
import Testing
import Varlink

/// The registry and its fan-out on manual time: names created and removed, watchers of one
/// stopwatch served by one subscription.
@Suite("stopwatch registry and fan-out")
struct StopwatchRegistryTests {
    /// A registry on `queue`; every call goes through it.
    final class Fixture: @unchecked Sendable {
        // Unchecked: `registry` is used only on `queue` (serial); the rest is constant or locked.
        let time = ManualTime()
        let queue = DispatchQueue(label: "registry-test")
        let registry: StopwatchRegistry
        /// What each watcher received, by watcher name.
        let received = Locked<[String: [StopWatchSnapshot]]>([:])
        /// The events each watcher was told, by watcher name.
        let events = Locked<[String: [WatchEvent]]>([:])
        let arrived = DispatchSemaphore(value: 0)

        init(limit: Int = 10) {
            let time = self.time
            registry = StopwatchRegistry(limit: limit, queue: queue) { snapshot in
                StopWatchUseCase(snapshot, clock: time, timers: time, tick: .seconds(1))
            }
        }

        func watch(_ name: String, as watcher: String) -> Int {
            queue.sync {
                registry.beginWatching(name) { [received, events, arrived] snapshot, event in
                    events.withLock { $0[watcher, default: []].append(event) }
                    received.withLock { $0[watcher, default: []].append(snapshot) }
                    arrived.signal()
                }
            }
        }

        /// Waits until `condition` holds of what was received, or 10 s pass.
        func waitUntil(_ condition: ([String: [StopWatchSnapshot]]) -> Bool) -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while !received.withLock({ condition($0) }) {
                guard ContinuousClock.now < deadline else { return false }
                _ = arrived.wait(timeout: .now() + .milliseconds(100))
            }
            return true
        }
    }

    @Test("created by create, counted against the limit, listed sorted; remove frees the slot")
    func createAndRemove() throws {
        let fixture = Fixture(limit: 2)
        try fixture.queue.sync {
            let registry = fixture.registry
            _ = try registry.create("b")
            _ = try registry.create("a")
            #expect(throws: VarlinkError.tooManyStopwatches(limit: 2)) { _ = try registry.create("c") }
            #expect(registry.createdStopwatches.map(\.name) == ["a", "b"])
            #expect(registry.remove("a"))
            #expect(!registry.remove("a"))
            _ = try registry.create("c")
            #expect(registry.createdCount == 2)
        }
    }

    @Test("three watchers of one stopwatch get the same states in the same order; ticks reach them all")
    func fanOut() throws {
        let fixture = Fixture()
        let watchers = ["w1", "w2", "w3"].map { ($0, fixture.watch("tea", as: $0)) }
        #expect(fixture.waitUntil { received in watchers.allSatisfy { received[$0.0]?.count == 1 } })
        try fixture.queue.sync { _ = try fixture.registry.create("tea").dispatcher.perform(.start) }
        fixture.time.advance(by: .seconds(2))
        #expect(fixture.waitUntil { received in watchers.allSatisfy { received[$0.0]?.count == 4 } })
        let all = fixture.received.withLock { $0 }
        #expect(all["w1"] == all["w2"] && all["w2"] == all["w3"])
        #expect(all["w1"]?.map(\.state.elapsed) == [.zero, .zero, .seconds(1), .seconds(2)])
        #expect(fixture.events.withLock { $0 }["w3"] == [.current, .start, .tick, .tick])
        // One subscription, so one tick timer, for the three.
        #expect(fixture.time.liveTimers.count == 1)
        #expect(fixture.queue.sync { fixture.registry.watcherCount } == 3)
    }

    @Test("the last watcher gone ends the subscription and the ticks; a name only watched is forgotten")
    func lastWatcherLeaves() throws {
        let fixture = Fixture()
        let first = fixture.watch("tea", as: "w1")
        let second = fixture.watch("tea", as: "w2")
        try fixture.queue.sync { _ = try fixture.registry.create("tea").dispatcher.perform(.start) }
        #expect(fixture.waitUntil { $0["w2"]?.last?.state.isCounting == true })
        fixture.queue.sync { fixture.registry.endWatching("tea", watcher: first) }
        #expect(fixture.time.liveTimers.count == 1)
        fixture.queue.sync { fixture.registry.endWatching("tea", watcher: second) }
        // The timer is cancelled on the stopwatch's own queue, just after.
        #expect(fixture.waitUntil { _ in fixture.time.liveTimers.isEmpty })
        // Watched, never created: gone with its watcher, and never counted as created.
        let only = fixture.watch("other", as: "w3")
        fixture.queue.sync {
            #expect(fixture.registry.createdCount == 1)
            fixture.registry.endWatching("other", watcher: only)
            #expect(fixture.registry.watcherCount == 0)
        }
    }

    @Test("a removed stopwatch's watchers stay, are told removed, and follow the name anew")
    func removedWhileWatched() throws {
        let fixture = Fixture()
        _ = fixture.watch("tea", as: "w")
        try fixture.queue.sync { _ = try fixture.registry.create("tea").dispatcher.perform(.start) }
        fixture.time.advance(by: .seconds(1))
        #expect(fixture.waitUntil { ($0["w"]?.count ?? 0) >= 3 })
        fixture.queue.sync { #expect(fixture.registry.remove("tea")) }
        #expect(fixture.waitUntil { $0["w"]?.last == .stopped })
        #expect(fixture.events.withLock { $0 }["w"] == [.current, .start, .tick, .removed])
        #expect(fixture.queue.sync { fixture.registry.created("tea") } == nil)
        #expect(fixture.queue.sync { fixture.registry.watcherCount } == 1)
        // The removed one's tick timer went with it.
        #expect(fixture.waitUntil { _ in fixture.time.liveTimers.isEmpty })
        // Started again under the same name: the watcher sees it, as a start.
        try fixture.queue.sync { _ = try fixture.registry.create("tea").dispatcher.perform(.start) }
        #expect(fixture.waitUntil { $0["w"]?.last?.state.isCounting == true })
        #expect(fixture.events.withLock { $0 }["w"]?.last == .start)
    }

    @Test("a watcher that leaves as it is told 'removed' (its client gone) leaves no subscription or timer behind")
    func watcherLeavesWhenToldRemoved() throws {
        let fixture = Fixture()
        let registry = fixture.registry
        let id = Locked(0)
        fixture.queue.sync {
            let watcher = registry.beginWatching("tea") { _, event in
                // What a connection does when writing this reply fails: close, end the watch.
                if event == .removed { registry.endWatching("tea", watcher: id.withLock { $0 }) }
            }
            id.withLock { $0 = watcher }
        }
        try fixture.queue.sync { _ = try registry.create("tea").dispatcher.perform(.start) }
        fixture.queue.sync { #expect(registry.remove("tea")) }
        fixture.queue.sync { #expect(registry.watcherCount == 0) }
        // Nobody watches now: started again, it needs no tick timer.
        try fixture.queue.sync { _ = try registry.create("tea").dispatcher.perform(.start) }
        #expect(fixture.waitUntil { _ in fixture.time.liveTimers.isEmpty })
        #expect(fixture.time.liveTimers.isEmpty, "\(fixture.time.liveTimers.count) tick timer(s) for nobody")
    }
}
