import Dispatch
import Foundation
import LinuxSystem
import StopWatchCore
@testable import StopwatchDaemon
import Testing
import Varlink

/// How stopwatches are kept and restored: exact in the same boot, from the wall clock after
/// a reboot, never losing counted time. Clocks and boot ids are injected: nothing sleeps.
@Suite("persistence: records")
struct StopwatchRecordTests {
    let saved = ClockReading(boot: .seconds(1000), wall: .seconds(1_700_000_000), bootID: "boot-a")

    func counting(_ elapsed: Duration, laps: [Duration] = []) -> StopWatchSnapshot {
        .counting(since: saved.boot - elapsed, laps: laps, now: saved.boot)
    }

    @Test("each state survives the trip to JSON and back")
    func roundTrip() throws {
        for snapshot in [StopWatchSnapshot.stopped, .paused(at: .milliseconds(1500), laps: [.seconds(1)]), counting(.seconds(5), laps: [.seconds(2)])] {
            let record = StopwatchRecord(name: "tea", snapshot: snapshot, at: saved)
            #expect(try StopwatchRecord(json: JSONParser.parse(record.json.serialized)) == record)
        }
    }

    @Test("the file's bytes, laps written straight, are the JSON's, byte for byte")
    func serializedIsTheJSON() throws {
        let manyLaps = (1...1_000).map { Duration.milliseconds(500 * $0 + $0 % 7) + .nanoseconds($0) }
        let snapshots: [StopWatchSnapshot] = [
            .stopped, .stopped(target: .seconds(60)), .paused(at: .milliseconds(1500), laps: [.seconds(1)]),
            counting(.seconds(5), laps: [.seconds(2)]), counting(.seconds(900), laps: manyLaps),
            .paused(at: .seconds(30), laps: [.zero, .nanoseconds(1)], target: .seconds(20), hasExpired: true),
            .counting(since: saved.boot - .seconds(9), laps: [.seconds(3)], now: saved.boot, target: .seconds(10), intervalStart: .seconds(4)),
        ]
        for snapshot in snapshots {
            let record = StopwatchRecord(name: "tea \"ç\"", snapshot: snapshot, at: saved)
            #expect(record.serialized == record.json.serialized)
            #expect(try StopwatchRecord(json: JSONParser.parse(record.serialized)) == record)
        }
    }

    @Test("state files written by earlier daemons load unchanged: each state's word, and what it restores")
    func stateWords() throws {
        let written = [
            #"{"format":1,"name":"s","state":"stopped","elapsed_ns":0,"laps_ns":[]}"#,
            #"{"format":1,"name":"p","state":"pause","elapsed_ns":1500000000,"laps_ns":[1000000000]}"#,
            #"{"format":1,"name":"c","state":"counting","elapsed_ns":5000000000,"laps_ns":[],"boot_id":"boot-a","origin_boot_ns":995000000000,"origin_wall_ns":1699999995000000000}"#,
        ]
        let restored = try written.map { try StopwatchRecord(json: JSONParser.parse($0)).snapshot(restoredAt: saved) }
        #expect(restored == [.stopped, .paused(at: .milliseconds(1500), laps: [.seconds(1)]), counting(.seconds(5))])
        // And they are written back with the same words.
        for text in written {
            let record = try StopwatchRecord(json: JSONParser.parse(text))
            #expect(record.json == (try JSONParser.parse(text)))
        }
    }

    @Test("same boot: a counting stopwatch goes on exactly from its origin, however long it was down")
    func sameBoot() {
        let record = StopwatchRecord(name: "tea", snapshot: counting(.seconds(5), laps: [.seconds(2)]), at: saved)
        let later = ClockReading(boot: saved.boot + .seconds(3600), wall: saved.wall - .seconds(99), bootID: "boot-a")
        let restored = record.snapshot(restoredAt: later)
        #expect(restored.state == .counting(.seconds(3605)))
        #expect(restored.laps == [.seconds(2)])
        #expect(restored.elapsed(at: later.boot + .seconds(1)) == .seconds(3606))
    }

    @Test("a wall clock set while no daemon ran (exit on idle) makes a counting record stale in its boot, and only then")
    func staleWallOrigin() {
        let record = StopwatchRecord(name: "tea", snapshot: counting(.seconds(5)), at: saved)
        let hourLater = ClockReading(boot: saved.boot + .seconds(3600), wall: saved.wall + .seconds(3600), bootID: "boot-a")
        #expect(!record.wallOriginIsStale(at: hourLater))
        // Slewed by less than the tolerance: not worth a write.
        #expect(!record.wallOriginIsStale(at: ClockReading(boot: hourLater.boot, wall: hourLater.wall + .milliseconds(900), bootID: "boot-a")))
        #expect(record.wallOriginIsStale(at: ClockReading(boot: hourLater.boot, wall: hourLater.wall + .seconds(90), bootID: "boot-a")))
        #expect(record.wallOriginIsStale(at: ClockReading(boot: hourLater.boot, wall: hourLater.wall - .seconds(90), bootID: "boot-a")))
        // Another boot: the wall clock is all there is to go by.
        #expect(!record.wallOriginIsStale(at: ClockReading(boot: .seconds(20), wall: hourLater.wall + .seconds(90), bootID: "boot-b")))
        // Paused: no origin to keep.
        let paused = StopwatchRecord(name: "tea", snapshot: .paused(at: .seconds(5), laps: []), at: saved)
        #expect(!paused.wallOriginIsStale(at: ClockReading(boot: hourLater.boot, wall: hourLater.wall + .seconds(90), bootID: "boot-a")))
    }

    @Test("after a reboot: elapsed continues from the wall clock")
    func reboot() {
        let record = StopwatchRecord(name: "tea", snapshot: counting(.seconds(5)), at: saved)
        // A new boot: the boot clock starts again near zero; 10 minutes passed on the wall.
        let afterReboot = ClockReading(boot: .seconds(20), wall: saved.wall + .seconds(600), bootID: "boot-b")
        let restored = record.snapshot(restoredAt: afterReboot)
        #expect(restored.state == .counting(.seconds(605)))
        #expect(restored.elapsed(at: afterReboot.boot + .seconds(5)) == .seconds(610))
    }

    @Test("after a reboot with the wall clock set back: no counted time is lost, none is negative")
    func rebootWithClockSetBack() {
        let record = StopwatchRecord(name: "tea", snapshot: counting(.seconds(5)), at: saved)
        for setBack in [Duration.seconds(1), .seconds(3600), .seconds(1_700_000_000)] {
            let afterReboot = ClockReading(boot: .seconds(20), wall: saved.wall - setBack, bootID: "boot-b")
            let restored = record.snapshot(restoredAt: afterReboot)
            #expect(restored.state == .counting(.seconds(5)))
            #expect(restored.elapsed(at: afterReboot.boot) >= .zero)
        }
    }

    @Test("paused and stopped come back as they were, in any boot")
    func pausedAndStopped() {
        let otherBoot = ClockReading(boot: .seconds(1), wall: .zero, bootID: "boot-c")
        let paused = StopWatchSnapshot.paused(at: .milliseconds(1234), laps: [.milliseconds(500)])
        #expect(StopwatchRecord(name: "p", snapshot: paused, at: saved).snapshot(restoredAt: otherBoot) == paused)
        #expect(StopwatchRecord(name: "s", snapshot: .stopped, at: saved).snapshot(restoredAt: otherBoot) == .stopped)
    }

    @Test("records that are not format 1 stopwatches are refused", arguments: [
        #"{"format":2,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[]}"#,
        #"{"name":"a","state":"pause","elapsed_ns":1,"laps_ns":[]}"#,
        #"{"format":1,"name":"a/b","state":"pause","elapsed_ns":1,"laps_ns":[]}"#,
        #"{"format":1,"name":"a","state":"running","elapsed_ns":1,"laps_ns":[]}"#,
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":-1,"laps_ns":[]}"#,
        #"{"format":1,"name":"a","state":"counting","elapsed_ns":1,"laps_ns":[]}"#,
        #"{"format":1,"name":"a","state":"pause","elapsed_ns":1,"laps_ns":["x"]}"#,
        #"[]"#,
    ])
    func refused(text: String) throws {
        #expect(throws: MalformedMessage.self) { try StopwatchRecord(json: JSONParser.parse(text)) }
    }
}

@Suite("persistence: the state directory")
struct StateStoreTests {
    let root: String
    let directory: String
    let log = Locked<[String]>([])
    /// What the store is to write again for a name whose write failed.
    let current = Locked<[String: StopWatchSnapshot]>([:])
    let clocks = ClockReading(boot: .seconds(50), wall: .seconds(1_700_000_000), bootID: "boot-a")

    init() throws {
        root = NSTemporaryDirectory() + "swstate-\(UInt64.random(in: 0...UInt64.max))"
        directory = root + "/stopwatches"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    func makeStore(queue: DispatchQueue = DispatchQueue(label: "store")) -> StateStore {
        let log = self.log
        let logger = Logger(minimumLevel: .debug, journald: false) { line in log.withLock { $0.append(line) } }
        let clocks = self.clocks
        // The retry timer never fires during a test: it would race the test's own calls.
        let current = self.current
        return StateStore(
            directory: root, maximumLaps: 10_000, logger: logger, queue: queue,
            currentSnapshot: { name in current.withLock { $0[name] } },
            problemChanged: { _ in },
            retryInterval: .seconds(3600)
        ) { clocks }
    }

    /// Runs `body` with a store that is gone when it returns: one store holds the state
    /// directory's lock, as one daemon does, so the next can only load once it is released.
    func withStore(_ body: (StateStore) throws -> Void) rethrows {
        try body(makeStore())
    }

    func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    @Test("what is saved loads back, and removing deletes")
    func saveAndLoad() throws {
        let counting = StopWatchSnapshot.counting(since: .seconds(40), laps: [.seconds(3)], now: clocks.boot)
        try withStore { (store) throws in
            #expect(try store.load().isEmpty)
            store.save("counting", counting)
            store.save("paused", .paused(at: .seconds(2), laps: [.seconds(1)]))
            store.save("stopped", .stopped)
            store.save("gone", .stopped)
            store.save("gone", nil)
            #expect(store.problem == nil)
        }
        let loaded = try makeStore().load()
        #expect(loaded.map(\.name) == ["counting", "paused", "stopped"])
        #expect(loaded[0].snapshot == counting)
        #expect(loaded[1].snapshot == .paused(at: .seconds(2), laps: [.seconds(1)]))
        #expect(loaded[2].snapshot == .stopped)
        #expect(try files() == ["counting.json", "paused.json", "stopped.json"])
    }

    @Test("saveSoon writes each name as it is then, in later turns of the queue; saveBeforeExit writes what still waits")
    func saveSoon() throws {
        // One store holds the directory's lock: this one is gone before the next loads.
        try {
            let queue = DispatchQueue(label: "store")
            let store = makeStore(queue: queue)
            try queue.sync { _ = try store.load() }
            let names = (0..<40).map { "c\($0)" }
            current.withLock { current in for name in names { current[name] = .paused(at: .seconds(1)) } }
            queue.sync {
                store.saveSoon(names)
                store.saveSoon(["c0"])
                // Changed again before its turn: what is written is the newest.
                current.withLock { $0["c0"] = .paused(at: .seconds(2)) }
                #expect((try? files()) ?? [] == [], "nothing in the turn that asked")
            }
            // Later turns of the store's queue, 16 names a turn.
            for _ in 0..<10 { queue.sync {} }
            #expect(((try? files()) ?? []).count == 40)
            current.withLock { $0["late"] = .stopped }
            queue.sync {
                store.saveSoon(["late"])
                store.saveBeforeExit()
                #expect((try? files())?.contains("late.json") == true)
            }
        }()
        let loaded = try makeStore().load()
        #expect(loaded.first { $0.name == "c0" }?.snapshot == .paused(at: .seconds(2)))
        #expect(loaded.count == 41)
    }

    @Test("saved together, with their flushes shared: each file whole, no temporary file left; a failure midway throws, the rest unchanged")
    func replacedTogether() throws {
        let directory = try DirectoryDescriptor.open(root)
        defer { directory.close() }
        func read(_ name: String) -> String? { try? String(contentsOfFile: root + "/" + name, encoding: .utf8) }
        try directory.replaceAtomically([("a", Array("a1".utf8), ".a.tmp"), ("b", Array("b1".utf8), ".b.tmp")])
        #expect(read("a") == "a1" && read("b") == "b1")
        // A directory where "c" goes: its rename fails (EISDIR).
        try FileManager.default.createDirectory(atPath: root + "/c", withIntermediateDirectories: false)
        #expect(throws: Errno.self) {
            try directory.replaceAtomically([
                ("a", Array("a2".utf8), ".a.tmp"), ("c", Array("c2".utf8), ".c.tmp"), ("d", Array("d2".utf8), ".d.tmp"),
            ])
        }
        #expect(read("a") == "a2", "renamed before the failure")
        #expect(read("d") == nil, "not renamed")
        let names = try FileManager.default.contentsOfDirectory(atPath: root)
        #expect(!names.contains { $0.hasSuffix(".tmp") }, "\(names)")
    }

    @Test("whenAllSaved: told once every name handed to saveSoon is written, not before")
    func allSaved() throws {
        let queue = DispatchQueue(label: "store")
        let store = makeStore(queue: queue)
        try queue.sync { _ = try store.load() }
        let told = Locked(0)
        let names = (0..<40).map { "c\($0)" }
        current.withLock { current in for name in names { current[name] = .paused(at: .seconds(1)) } }
        queue.sync {
            store.whenAllSaved = { told.withLock { $0 += 1 } }
            store.saveSoon(names)
        }
        // 16 a turn: not after the first two turns, once after the third.
        queue.sync {}
        queue.sync {}
        #expect(told.withLock { $0 } == 0)
        queue.sync {}
        #expect(told.withLock { $0 } == 1)
        #expect(((try? files()) ?? []).count == 40)
    }

    @Test("corrupt, truncated, empty and future files are moved aside, logged, and the rest loads", arguments: [
        "{not json", #"{"format":1,"name":"bad","state":"pause","elapsed_ns":1,"#, "",
        #"{"format":9,"name":"bad","state":"pause","elapsed_ns":1,"laps_ns":[]}"#,
        #"{"format":1,"name":"other","state":"pause","elapsed_ns":1,"laps_ns":[]}"#,
    ])
    func damagedFiles(content: String) throws {
        withStore { $0.save("good", .paused(at: .seconds(1))) }
        #expect(FileManager.default.createFile(atPath: directory + "/bad.json", contents: Data(content.utf8)))
        let loaded = try makeStore().load()
        #expect(loaded.map(\.name) == ["good"])
        let names = try files()
        #expect(!names.contains("bad.json"))
        #expect(names.contains { $0.hasPrefix("bad.json.corrupt-2023") })
        #expect(log.withLock { $0 }.contains { $0.contains("bad.json is unreadable") && $0.contains("error") })
        // The moved file is kept as it was, for whoever wants to look.
        let aside = try #require(names.first { $0.hasPrefix("bad.json.corrupt-") })
        #expect(FileManager.default.contents(atPath: directory + "/" + aside) == Data(content.utf8))
    }

    @Test("a crash between write and rename leaves the old state, which loads; the temporary file goes")
    func crashMidWrite() throws {
        withStore { $0.save("tea", .paused(at: .seconds(7))) }
        // What a crash before the rename leaves: a half-written temporary file.
        #expect(FileManager.default.createFile(atPath: directory + "/.tea.json.tmp", contents: Data(#"{"format":1,"na"#.utf8)))
        let loaded = try makeStore().load()
        #expect(loaded.count == 1)
        #expect(loaded.first?.snapshot == .paused(at: .seconds(7)))
        #expect(try files() == ["tea.json"])
    }

    @Test("a wall clock set while no daemon ran: loading writes the counting stopwatch again, so a reboot neither adds nor loses the step")
    func wallClockSetWhileDown() throws {
        let root = self.root
        func store(_ now: ClockReading) -> StateStore {
            StateStore(
                directory: root, maximumLaps: 10_000, logger: Logger(minimumLevel: .error, journald: false) { _ in },
                queue: DispatchQueue(label: "store"), currentSnapshot: { _ in nil }, problemChanged: { _ in },
                retryInterval: .seconds(3600)
            ) { now }
        }
        let start = ClockReading(boot: .seconds(100), wall: .seconds(1_700_000_000), bootID: "boot-a")
        try {
            let first = store(start)
            _ = try first.load()
            first.save("tea", .counting(since: start.boot, laps: [], now: start.boot))
        }()
        // 20 s later on the boot clock, while no daemon ran, NTP stepped the wall clock 60 s ahead.
        let stepped = ClockReading(boot: start.boot + .seconds(20), wall: start.wall + .seconds(80), bootID: "boot-a")
        try {
            let loaded = try store(stepped).load()
            #expect(loaded.first?.snapshot.elapsed(at: stepped.boot) == .seconds(20))
        }()
        // A reboot 10 s (wall) later: 30 s counted, not 90.
        let rebooted = ClockReading(boot: .seconds(5), wall: stepped.wall + .seconds(10), bootID: "boot-b")
        let afterReboot = try store(rebooted).load()
        #expect(afterReboot.first?.snapshot.elapsed(at: rebooted.boot) == .seconds(30))
    }

    @Test("an unwritable directory: the failure is logged once, and everything is saved once it is writable")
    func unwritable() throws {
        let store = makeStore()
        _ = try store.load()
        store.save("first", .paused(at: .seconds(1)))
        // Make it unwritable even for root: the directory becomes a file.
        try FileManager.default.removeItem(atPath: directory)
        #expect(FileManager.default.createFile(atPath: directory, contents: nil))
        store.save("second", .paused(at: .seconds(2)))
        store.save("third", .paused(at: .seconds(3)))
        #expect(store.problem != nil)
        #expect(log.withLock { $0 }.count { $0.contains("cannot save stopwatches") } == 1)

        try FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        current.withLock { $0 = ["second": .paused(at: .seconds(2)), "third": .paused(at: .seconds(3))] }
        store.save("fourth", .paused(at: .seconds(4)))
        #expect(store.problem == nil)
        #expect(try files() == ["fourth.json", "second.json", "third.json"])
        #expect(log.withLock { $0 }.contains { $0.contains("writable again") })
    }

    @Test("the read limit fits 10,000 laps of the widest number, and never drops below 1 MiB")
    func readLimit() {
        #expect(StopwatchFileReader.maximumFileSize(maximumLaps: 10_000) == 1 << 20)
        #expect(StopwatchFileReader.maximumFileSize(maximumLaps: 100_000) == 24_576 + 21 * 100_000)
        #expect(StopwatchFileReader.maximumFileSize(maximumLaps: Int.max) == Int.max)
    }

    @Test("the read limit fits the widest file: the laps, the longest name, note and cycle, every field set")
    func readLimitFitsTheWidestFile() {
        let laps = [Duration](repeating: StopwatchRecord.maximumElapsed, count: 100_000)
        let now = ClockReading(boot: .seconds(1000), awake: .seconds(10), wall: .seconds(1_700_000_000), bootID: "b")
        let snapshot = StopWatchSnapshot.counting(
            since: .seconds(5), laps: laps, now: .seconds(10), target: .seconds(60), hasExpired: true, intervalStart: .seconds(2),
            countsSleep: false, note: String(repeating: "\"😀\\", count: 341), intervalStartBoot: .seconds(990)
        )
        // Sixteen phases of the longest labels and targets, snoozed as often as may be.
        let label = String(repeating: "😀", count: 32)
        let cycle = StopWatchCycle(
            phases: Array(repeating: .init(label: label, target: .seconds(366 * 86_400)), count: 16), rounds: 1000, auto: false, phase: 15, round: 1000
        )
        let snooze = StopWatchSnooze(count: Int(StopwatchRecord.maximumSnoozes), originalTarget: .seconds(366 * 86_400))
        var record = StopwatchRecord(name: String(repeating: "😀", count: 64), snapshot: snapshot.restoring(cycle: cycle, snooze: snooze), at: now)
        record.intervalID = "0123456789abcdef"
        #expect(record.cycle != nil && record.snooze != nil)
        #expect(record.serialized.count <= StopwatchFileReader.maximumFileSize(maximumLaps: laps.count))
        // And without the laps' slack (each lap here a digit short of the widest Int64).
        #expect(record.serialized.count - 20 * laps.count <= 24_576, "the rest of the record fits its allowance")
        #expect(record.serialized.count > 21 * laps.count - 100_000, "the laps are as wide as the limit assumes, nearly")
    }
}
