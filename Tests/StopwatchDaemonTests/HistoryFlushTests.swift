import Dispatch
import Foundation
import LinuxSystem
import StopWatchCore
@testable import StopwatchDaemon
import StopwatchProtocol
import StopWatchTesting
import Testing
import Varlink

/// An automatic phase change's line (`HistoryFlush.afterTelling`): in its month's file when
/// the phase is told, flushed in a later turn, and always before a state file is written,
/// so that no state file on disk is ahead of the history; and `open.json`, made and written
/// off the serving queue from what counts as of each change.
@Suite("history: a phase's line flushed after it is told")
final class HistoryFlushTests {
    let root: String
    let wall: Int64 = 1_700_000_000_000

    init() throws {
        var template = Array("/tmp/stopwatchd-flush-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    func fixture() -> StopwatchServiceFixture {
        StopwatchServiceFixture(now: .seconds(100), historyDirectory: root + "/history", wallClock: ManualWallClock(wall))
    }

    func monthLines() throws -> [String] {
        let folder = root + "/history"
        guard FileManager.default.fileExists(atPath: folder) else { return [] }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".jsonl") }.sorted()
        return try names.flatMap { try String(contentsOfFile: folder + "/" + $0, encoding: .utf8).split(separator: "\n").map(String.init) }
    }

    static let cycle: JSONObject = [
        "name": .string("c"),
        "phases": .array([
            .object(["label": .string("focus"), "target_ms": .int(10_000)]), .object(["label": .string("break"), "target_ms": .int(5_000)]),
        ]),
        "auto": .bool(true),
    ]

    @Test("a phase's line is in its month's file when the phase is told, flushed in the next turn")
    func phaseLineWrittenBeforeTellingFlushedAfter() throws {
        let f = fixture()
        #expect(f.reply("StartCycle", Self.cycle) != nil)
        // No line yet: the month's file is made by the phase's.
        #expect(try monthLines().isEmpty)
        let seen = Locked<[(lines: [String], unflushed: Int)]>([])
        f.queue.sync {
            f.told.whenTold = { [self] batch in
                guard batch.events.contains(where: { $0.event == .phase }) else { return }
                let lines = (try? monthLines()) ?? []
                seen.withLock { $0.append((lines, f.history!.unflushed.count)) }
            }
        }
        f.time.advance(by: .seconds(10))
        // The turn after the phase's: the flush (queued before this).
        f.queue.sync {}
        let told = seen.withLock { $0 }
        #expect(told.count == 1)
        #expect(told.first?.lines.count == 1 && told.first?.lines.first?.contains(#""phase":"focus""#) == true)
        #expect(told.first?.unflushed == 1)
        #expect(f.queue.sync { f.history!.unflushed }.isEmpty)
        // A stop's line is flushed before its reply, as every command's.
        #expect(f.reply("Stop", ["name": .string("c")]) != nil)
        #expect(f.queue.sync { f.history!.unflushed }.isEmpty)
        #expect(try monthLines().count == 2)
    }

    /// A journal of the history folder; its flushes fail while `failing` says so (EIO), as a
    /// disk's can.
    func journal(queue: DispatchQueue, failing: Locked<Bool> = Locked(false)) -> HistoryJournal {
        let path = root + "/history"
        return HistoryJournal(
            openDirectory: { () throws(Errno) in try DirectoryDescriptor.open(path, creatingWith: 0o700) },
            logger: Logger(minimumLevel: .error, journald: false) { _ in },
            queue: queue,
            wallClock: ManualWallClock(wall),
            retryInterval: .seconds(3600),
            syncData: { file throws(Errno) in
                if failing.withLock({ $0 }) { throw Errno(EIO) }
                try file.dataSync()
            }
        )
    }

    func ids() throws -> [String] {
        try monthLines().map { line in
            let id = line.split(separator: "\"")[3]
            return String(id.suffix(2))
        }
    }

    @Test("a flush that fails: the lines' records wait in memory, first, and are written again once it works (a duplicate rather than a loss), in order")
    func failedFlushWritesAgain() throws {
        let queue = DispatchQueue(label: "journal")
        let failing = Locked(false)
        let history = journal(queue: queue, failing: failing)
        let december = Int64(1_701_388_800_000) // 2023-12-01 00:00 UTC
        queue.sync {
            history.append(interval(0xa1, endMs: wall), flush: .afterTelling)
            history.append(interval(0xa2, endMs: wall + 1), flush: .afterTelling)
        }
        // The flush turn fails: both wait, the problem said.
        failing.withLock { $0 = true }
        queue.sync { history.flushWritten() }
        #expect(queue.sync { history.unwritten.map(\.id) } == [interval(0xa1, endMs: 0).id, interval(0xa2, endMs: 0).id])
        #expect(queue.sync { history.problem }?.contains("cannot flush the history to disk") == true)
        // A line written now fails too (its own flush), and waits after them.
        queue.sync { _ = history.append(interval(0xa3, endMs: wall + 2)) }
        #expect(queue.sync { history.unwritten.map(\.id) }.map { String($0.suffix(2)) } == ["a1", "a2", "a3"])
        failing.withLock { $0 = false }
        queue.sync { history.retry() }
        #expect(queue.sync { history.unwritten }.isEmpty && queue.sync { history.problem } == nil)
        // In order, after the first, unflushed copies (which a disk may or may not have kept).
        #expect(try ids() == ["a1", "a2", "a1", "a2", "a3"])

        // A month's file that cannot be flushed as it closes for the next month's line, and
        // the next month's too: all wait, in the order they were written.
        queue.sync { _ = history.append(interval(0xb1, endMs: wall + 3), flush: .afterTelling) }
        failing.withLock { $0 = true }
        queue.sync { _ = history.append(interval(0xb2, endMs: december), flush: .afterTelling) }
        #expect(queue.sync { history.unwritten.map(\.id) }.map { String($0.suffix(2)) } == ["b1", "b2"])
        failing.withLock { $0 = false }
        queue.sync { history.retry() }
        #expect(queue.sync { history.unwritten }.isEmpty)
        #expect(try ids().suffix(4) == ["b1", "b1", "b2", "b2"])
    }

    func interval(_ number: Int64, endMs: Int64) -> Interval {
        Interval(id: String(format: "%016llx", number), name: "c", startMs: endMs - 1000, endMs: endMs, elapsedMs: 1000)
    }

    @Test("lines .afterTelling wait together; an append .now, a month's change or a flush flushes them")
    func afterTellingWaitsUntilFlushed() throws {
        let queue = DispatchQueue(label: "journal")
        let history = journal(queue: queue)
        let december = Int64(1_701_388_800_000) // 2023-12-01 00:00 UTC
        let states: [Int] = queue.sync {
            var states: [Int] = []
            history.append(interval(1, endMs: wall), flush: .afterTelling)
            states.append(history.unflushed.count)
            history.append(interval(2, endMs: wall + 1), flush: .afterTelling)
            states.append(history.unflushed.count)
            history.append(interval(3, endMs: wall + 2))
            states.append(history.unflushed.count)
            history.append(interval(4, endMs: wall + 3), flush: .afterTelling)
            states.append(history.unflushed.count)
            // The next month: the last month's lines flushed as its file closes.
            history.append(interval(5, endMs: december), flush: .afterTelling)
            states.append(history.unflushed.count)
            history.flushWritten()
            states.append(history.unflushed.count)
            return states
        }
        #expect(states == [1, 2, 0, 1, 1, 0])
        #expect(try monthLines().count == 5)
        // Nothing waits: a flush asked for does nothing, and nothing is queued.
        queue.sync { history.flushSoon() }
        #expect(queue.sync { history.isFlushComing } == false)
    }

    static let deviceID = "0123456789abcdef0123456789abcdef"

    /// The history folder as the daemon opens it, with the guard against another writer.
    func guardedFolder() throws -> HistoryFolder {
        let (path, state) = (root + "/guarded", root + "/state")
        for made in [path, state] where !FileManager.default.fileExists(atPath: made) {
            try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        let logger = Logger(minimumLevel: .error, journald: false) { _ in }
        let layout = HistoryLayout(deviceID: Self.deviceID, deviceName: "box", hostName: "host", trust: .currentProcess, logger: logger)
        let ownFolderGuard = OwnFolderGuard(stateDirectory: state, logger: logger) { try? DirectoryDescriptor.open(state) }
        return HistoryFolder(layout: layout, path: path, openRoot: { () throws(Errno) in try DirectoryDescriptor.open(path) }, ownFolderGuard: ownFolderGuard)
    }

    @Test("a daemon killed after a phase's line made its month's file, before the flush: the next start takes the folder as its own, the line in it", arguments: [HistoryFlush.now, .afterTelling])
    func killedBeforeTheFlush(_ flush: HistoryFlush) throws {
        let queue = DispatchQueue(label: "journal")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func journal(_ folder: HistoryFolder) -> HistoryJournal {
            HistoryJournal(
                openDirectory: { () throws(Errno) in try folder.openDeviceFolder() },
                logger: Logger(minimumLevel: .error, journald: false) { _ in }, queue: queue, wallClock: ManualWallClock(now),
                retryInterval: .seconds(3600), deviceID: Self.deviceID, ownFolderGuard: folder.ownFolderGuard
            )
        }
        // The first daemon, in a scope of its own: gone (its folder's lock with it) when it ends.
        func firstRun() throws {
            let made = try guardedFolder()
            try made.prepareAtStart()
            let first = journal(made)
            queue.sync {
                first.start()
                first.recordOwnFolder()
                first.append(Interval(id: "00000000000000a1", name: "c", startMs: now - 1000, endMs: now, elapsedMs: 1000, phase: "focus"), flush: flush)
                // Killed here: no flush turn, no clean stop.
            }
            #expect(queue.sync { first.unflushed.count } == (flush == .now ? 0 : 1))
        }
        try firstRun()
        // The next start: the month's file made before the line was written is recorded as
        // this daemon's (a refusal here would keep the daemon from starting).
        let again = try guardedFolder()
        try again.prepareAtStart()
        let second = journal(again)
        queue.sync { second.start() }
        let month = HistoryMonth(epochMilliseconds: now).fileName
        let text = try String(contentsOfFile: root + "/guarded/" + Self.deviceID + "/" + month, encoding: .utf8)
        #expect(text.contains(#""id":"00000000000000a1""#))
    }

    @Test("a state file is never written ahead of the history: the store flushes it first, alone or together")
    func stateStoreFlushesTheHistoryFirst() throws {
        let queue = DispatchQueue(label: "store")
        let clocks = ClockReading(boot: .seconds(100), wall: .seconds(1_700_000_000), bootID: "boot-a")
        let snapshot = StopWatchSnapshot.counting(since: clocks.boot, laps: [], now: clocks.boot)
        let store = StateStore(
            directory: root, maximumLaps: 10_000, logger: Logger(minimumLevel: .error, journald: false) { _ in }, queue: queue,
            currentSnapshot: { _ in snapshot }, problemChanged: { _ in }, retryInterval: .seconds(3600)
        ) { clocks }
        _ = try store.load()
        let files = Locked<[[String]]>([])
        let stopwatches = root + "/stopwatches"
        queue.sync {
            store.beforeSaving = {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: stopwatches))?.filter { !$0.hasPrefix(".") } ?? []
                files.withLock { $0.append(names.sorted()) }
            }
            store.save("a", snapshot)
            store.saveSoon(["b", "c"])
        }
        queue.sync {}
        // Each time before the files it writes are there: "a" alone, then "b" and "c" together.
        #expect(files.withLock { $0 } == [[], ["a.json"]])
        #expect(try FileManager.default.contentsOfDirectory(atPath: stopwatches).sorted() == ["a.json", "b.json", "c.json"])
    }

    @Test("open.json follows a cycle's phases: the new phase's interval listed, not the one that ended, without reading every stopwatch")
    func openFileFollowsPhases() throws {
        let f = fixture()
        let path = root + "/history/" + PeerDevices.openFileName
        func listed() throws -> [(id: String, phase: String?)] {
            f.queue.sync {}
            f.history!.openIntervalsFile.wait()
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            return (object["intervals"] as? [[String: Any]] ?? []).map { ($0["id"] as? String ?? "", $0["phase"] as? String) }
        }
        #expect(f.reply("StartCycle", Self.cycle) != nil)
        // Its write asked for now, so the next change, a second later, is past its window.
        f.queue.sync {}
        f.time.advance(by: .seconds(1))
        f.wallClock.advance(by: 1000)
        #expect(f.reply("Start", ["name": .string("tea")]) != nil)
        let first = try listed()
        #expect(first.map(\.phase) == ["focus", nil])
        f.time.advance(by: .seconds(10))
        f.wallClock.advance(by: 10_000)
        let second = try listed()
        let ended = f.historyIntervals(["name": .string("c")]).filter { $0.endMs != nil }
        #expect(ended.map(\.id) == [first[0].id])
        #expect(second.map(\.phase) == [nil, "break"])
        #expect(!second.map(\.id).contains(first[0].id))
        #expect(f.reply("Remove", ["name": .string("tea")]) != nil)
        f.time.advance(by: OpenIntervalsSchedule.window)
        #expect(try listed().map(\.phase) == ["break"])
    }

    @Test("open.json is made and written on its own queue: the serving queue answers while a write is held")
    func openFileOffTheServingQueue() throws {
        let f = fixture()
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        f.queue.sync {
            f.history!.writeOpenIntervals(writtenMs: wall) {
                started.signal()
                // Held until the serving queue has answered; a deadline, so a failure cannot hang.
                _ = release.wait(timeout: .now() + 30)
                return []
            }
        }
        #expect(started.wait(timeout: .now() + 30) == .success)
        // Served while the write is held (on the serving queue, this would wait 30 s).
        let began = ContinuousClock.now
        #expect(f.reply("Start", ["name": .string("tea")]) != nil)
        #expect(ContinuousClock.now - began < .seconds(10))
        release.signal()
        // That write, then the Start's (asked for in the serving queue's next turn).
        f.queue.sync {}
        #expect(f.history!.openIntervalsWrites == 2)
    }
}
