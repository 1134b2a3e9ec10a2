import Dispatch
import Foundation
import LinuxSystem
import StopWatchCore
@testable import StopwatchDaemon
import StopwatchProtocol
import Testing

/// The durable work after telling, on the `DurableWriter`'s queue: the state files of
/// expiries and phases (`StateStore.saveSoon`), and a phase's history line flushed
/// (`HistoryJournal.handOverFlush`); in the order handed over, never overtaking a command's
/// own save, and a failure there costs nothing.
@Suite("the durable writer: saves and flushes after telling, off the serving queue")
final class DurableWriterTests {
    let root: String
    let wall: Int64 = 1_700_000_000_000
    let clocks = ClockReading(boot: .seconds(100), wall: .seconds(1_700_000_000), bootID: "boot-a")
    let current = Locked<[String: StopWatchSnapshot]>([:])

    init() throws {
        var template = Array("/tmp/stopwatchd-durable-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Holds the writer's queue until the result's `release` (30 s at most, so that a failure
    /// cannot hang); returns once the hold has begun.
    func hold(_ writer: DurableWriter) -> DispatchSemaphore {
        let (started, release) = holdLater(writer)
        _ = started.wait(timeout: .now() + 30)
        return release
    }

    /// Holds the writer's queue from when the work handed over before has run: `started`
    /// says it has, `release` ends the hold.
    func holdLater(_ writer: DurableWriter) -> (started: DispatchSemaphore, release: DispatchSemaphore) {
        let (started, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        writer.hand {
            started.signal()
            _ = release.wait(timeout: .now() + 30)
        }
        return (started, release)
    }

    func store(queue: DispatchQueue, writer: DurableWriter) throws -> StateStore {
        let (clocks, current) = (self.clocks, self.current)
        let store = StateStore(
            directory: root, maximumLaps: 10_000, logger: Logger(minimumLevel: .error, journald: false) { _ in }, queue: queue,
            currentSnapshot: { name in current.withLock { $0[name] } }, problemChanged: { _ in }, retryInterval: .seconds(3600),
            clocks: { clocks }, writer: writer
        )
        _ = try store.load()
        return store
    }

    func counting(laps: Int) -> StopWatchSnapshot {
        .counting(since: clocks.boot, laps: Array(repeating: .seconds(1), count: laps), now: clocks.boot)
    }

    func laps(inFileOf name: String) throws -> Int {
        try Self.laps(inFileOf: name, root: root)
    }

    static func laps(inFileOf name: String, root: String) throws -> Int {
        let data = try Data(contentsOf: URL(fileURLWithPath: root + "/stopwatches/" + name + ".json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return (object["laps_ns"] as? [Any])?.count ?? 0
    }

    @Test("saveSoon's files are written on the writer: the serving queue turns while it is held, and all is saved once it ran")
    func savedOffTheServingQueue() throws {
        let (queue, writer) = (DispatchQueue(label: "serving"), DurableWriter())
        let store = try store(queue: queue, writer: writer)
        let allSaved = Locked(0)
        current.withLock { $0 = ["a": counting(laps: 1), "b": counting(laps: 2)] }
        let release = hold(writer)
        queue.sync {
            store.whenAllSaved = { allSaved.withLock { $0 += 1 } }
            store.saveSoon(["a", "b"])
        }
        // The turn that hands the batch over, and another: neither waits for the writer.
        queue.sync {}
        queue.sync {}
        #expect(!FileManager.default.fileExists(atPath: root + "/stopwatches/a.json"))
        #expect(queue.sync { store.isAllSaved } == false)
        release.signal()
        writer.drain()
        queue.sync {}
        #expect(try laps(inFileOf: "a") == 1 && laps(inFileOf: "b") == 2)
        #expect(queue.sync { store.isAllSaved })
        #expect(allSaved.withLock { $0 } == 1)
    }

    /// Stopwatch "a" with `laps` laps, due soon and handed over, its batch waiting behind a
    /// hold of the writer: the hold's `release`.
    func batchHeld(laps: Int, _ store: StateStore, _ queue: DispatchQueue, _ writer: DurableWriter) -> DispatchSemaphore {
        current.withLock { $0 = ["a": counting(laps: laps)] }
        let release = hold(writer)
        queue.sync { store.saveSoon(["a"]) }
        // The turn that hands it over.
        queue.sync {}
        return release
    }

    @Test("a command's save waits for the batch in flight, which holds an earlier state of its stopwatch: the newer is what stays")
    func commandSaveAfterTheBatch() throws {
        let (queue, writer) = (DispatchQueue(label: "serving"), DurableWriter())
        let store = try store(queue: queue, writer: writer)
        // Handed over (one lap), and waiting behind the hold.
        let release = batchHeld(laps: 1, store, queue, writer)
        let lapsBeforeSaving = Locked<[Int]>([])
        let newer = counting(laps: 2)
        current.withLock { $0["a"] = newer }
        let entered = DispatchSemaphore(value: 0)
        queue.async { [root] in
            store.beforeSaving = { lapsBeforeSaving.withLock { $0.append((try? Self.laps(inFileOf: "a", root: root)) ?? -1) } }
            entered.signal()
            store.save("a", newer)
        }
        _ = entered.wait(timeout: .now() + 30)
        release.signal()
        queue.sync {}
        // The batch was written before the command's file: it never lands over it.
        #expect(lapsBeforeSaving.withLock { $0 } == [1])
        writer.drain()
        queue.sync {}
        #expect(try laps(inFileOf: "a") == 2)
    }

    @Test("a batch that fails (stopwatches/ removed meanwhile) is saved again on the serving queue, which makes the folder again")
    func failedBatchSavedAgain() throws {
        let (queue, writer) = (DispatchQueue(label: "serving"), DurableWriter())
        let store = try store(queue: queue, writer: writer)
        let release = batchHeld(laps: 3, store, queue, writer)
        try FileManager.default.removeItem(atPath: root + "/stopwatches")
        release.signal()
        writer.drain()
        queue.sync {}
        #expect(try laps(inFileOf: "a") == 3)
        #expect(queue.sync { store.problem } == nil)
        #expect(queue.sync { store.isAllSaved })
    }

    @Test("before exit, the batches still due are written through the writer and the rest here")
    func saveBeforeExitWritesAll() throws {
        let (queue, writer) = (DispatchQueue(label: "serving"), DurableWriter())
        let store = try store(queue: queue, writer: writer)
        let names = (0..<40).map { "s\($0)" }
        current.withLock { current in for name in names { current[name] = .paused(at: .seconds(5), laps: []) } }
        let release = hold(writer)
        queue.sync { store.saveSoon(names) }
        queue.sync {}
        release.signal()
        // All saved when it returns, in the same turn: nothing left in flight at exit.
        #expect(queue.sync { () -> Bool in
            store.saveBeforeExit()
            return store.isAllSaved
        })
        let files = try FileManager.default.contentsOfDirectory(atPath: root + "/stopwatches").filter { !$0.hasPrefix(".") }
        #expect(files.count == names.count)
    }

    /// A journal of `history/` whose flushes run on `writer`; `failures` of them fail (EIO),
    /// as a disk's can, the first failure the only one an open file reports.
    func journal(queue: DispatchQueue, writer: DurableWriter, failures: Locked<Int>) -> HistoryJournal {
        let path = root + "/history"
        return HistoryJournal(
            openDirectory: { () throws(Errno) in try DirectoryDescriptor.open(path, creatingWith: 0o700) },
            logger: Logger(minimumLevel: .error, journald: false) { _ in },
            queue: queue,
            wallClock: ManualWallClock(wall),
            retryInterval: .seconds(3600),
            syncData: { file throws(Errno) in
                let fails = failures.withLock { failures in
                    defer { failures = max(failures - 1, 0) }
                    return failures > 0
                }
                if fails { throw Errno(EIO) }
                try file.dataSync()
            },
            writer: writer
        )
    }

    func interval(_ number: Int64, endMs: Int64) -> Interval {
        Interval(id: String(format: "%016llx", number), name: "c", startMs: endMs - 1000, endMs: endMs, elapsedMs: 1000)
    }

    func lineIDs() throws -> [String] {
        let folder = root + "/history"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".jsonl") }.sorted()
        return try names.flatMap { name in
            try String(contentsOfFile: folder + "/" + name, encoding: .utf8).split(separator: "\n").map { String($0.split(separator: "\"")[3].suffix(2)) }
        }
    }

    @Test("a phase's flush handed over runs on the writer; the lines are flushed once its result is learnt")
    func flushHandedOver() throws {
        let (queue, writer) = (DispatchQueue(label: "serving"), DurableWriter())
        let history = journal(queue: queue, writer: writer, failures: Locked(0))
        let release = hold(writer)
        queue.sync {
            history.append(interval(0xa1, endMs: wall), flush: .afterTelling)
            history.flushSoon()
        }
        // The turn that hands it over: it does not wait for the writer.
        queue.sync {}
        #expect(queue.sync { (history.unflushed.count, history.flushesInFlight.count) } == (0, 1))
        release.signal()
        writer.drain()
        queue.sync {}
        #expect(queue.sync { history.flushesInFlight.isEmpty && history.unwritten.isEmpty && history.problem == nil })
        #expect(try lineIDs() == ["a1"])
    }

    @Test("a flush handed over that fails sets aside its lines, those handed over after it and those written since: all written again, in order")
    func failedFlushHandedOver() throws {
        let (queue, writer) = (DispatchQueue(label: "serving"), DurableWriter())
        let failures = Locked(1)
        let history = journal(queue: queue, writer: writer, failures: failures)
        let release = hold(writer)
        queue.sync {
            history.append(interval(0xa1, endMs: wall), flush: .afterTelling)
            history.handOverFlush()
            history.append(interval(0xa2, endMs: wall + 1), flush: .afterTelling)
            history.handOverFlush()
            history.append(interval(0xa3, endMs: wall + 2), flush: .afterTelling)
        }
        release.signal()
        writer.drain()
        // The first failed; the second's flush, after it, said nothing that counts.
        queue.sync {}
        #expect(queue.sync { history.unwritten.map { String($0.id.suffix(2)) } } == ["a1", "a2", "a3"])
        #expect(queue.sync { history.problem }?.contains("cannot flush the history to disk") == true)
        #expect(queue.sync { history.flushResultsToDrop } == 0)
        queue.sync { history.retry() }
        #expect(queue.sync { history.unwritten.isEmpty && history.problem == nil })
        #expect(try lineIDs() == ["a1", "a2", "a3", "a1", "a2", "a3"])
    }

    @Test("a flush that failed, learnt while one handed over after it has not run: that one's result, when it comes, is dropped")
    func failureLearntBeforeTheNextResult() throws {
        let (queue, writer) = (DispatchQueue(label: "serving"), DurableWriter())
        let history = journal(queue: queue, writer: writer, failures: Locked(1))
        let first = hold(writer)
        queue.sync {
            history.append(interval(0xa1, endMs: wall), flush: .afterTelling)
            history.handOverFlush()
        }
        let second = holdLater(writer)
        queue.sync {
            history.append(interval(0xa2, endMs: wall + 1), flush: .afterTelling)
            history.handOverFlush()
        }
        first.signal()
        // The first flush has run (and failed) once the second hold begins: its result is
        // learnt with the second flush still waiting behind the hold.
        _ = second.started.wait(timeout: .now() + 30)
        queue.sync {}
        #expect(queue.sync { (history.flushesInFlight.count, history.flushResultsToDrop) } == (0, 1))
        #expect(queue.sync { history.unwritten.map { String($0.id.suffix(2)) } } == ["a1", "a2"])
        second.release.signal()
        writer.drain()
        queue.sync {}
        #expect(queue.sync { history.flushResultsToDrop } == 0)
        #expect(queue.sync { history.flushResults.withLock { $0.isEmpty } })
        queue.sync { history.retry() }
        #expect(try lineIDs() == ["a1", "a2", "a1", "a2"])
    }

    @Test("a line written now while a flush is in flight learns its result first: a failure there fails the line too, which is written again")
    func lineNowAfterAFailedFlush() throws {
        let (queue, writer) = (DispatchQueue(label: "serving"), DurableWriter())
        let failures = Locked(1)
        let history = journal(queue: queue, writer: writer, failures: failures)
        let release = hold(writer)
        queue.sync {
            history.append(interval(0xa1, endMs: wall), flush: .afterTelling)
            history.handOverFlush()
        }
        let entered = DispatchSemaphore(value: 0)
        let now = interval(0xa4, endMs: wall + 4)
        queue.async {
            entered.signal()
            history.append(now)
        }
        _ = entered.wait(timeout: .now() + 30)
        release.signal()
        queue.sync {}
        // The one failure went to the flush in flight: the line written now, whose own
        // flush would say nothing, waits with it.
        #expect(queue.sync { history.unwritten.map { String($0.id.suffix(2)) } } == ["a1", "a4"])
        queue.sync { history.retry() }
        #expect(queue.sync { history.unwritten.isEmpty })
        #expect(try lineIDs().suffix(2) == ["a1", "a4"])
    }

    @Test("the state store hands the history's flush over before its batch: the writer flushes the line before it writes the file")
    func historyFlushBeforeTheBatch() throws {
        let (queue, writer) = (DispatchQueue(label: "serving"), DurableWriter())
        let order = Locked<[String]>([])
        let path = root + "/history"
        let history = HistoryJournal(
            openDirectory: { () throws(Errno) in try DirectoryDescriptor.open(path, creatingWith: 0o700) },
            logger: Logger(minimumLevel: .error, journald: false) { _ in }, queue: queue, wallClock: ManualWallClock(wall),
            retryInterval: .seconds(3600),
            syncData: { [root] file throws(Errno) in
                let stateFile = FileManager.default.fileExists(atPath: root + "/stopwatches/c.json")
                order.withLock { $0.append(stateFile ? "flush after the file" : "flush") }
                try file.dataSync()
            },
            writer: writer
        )
        let store = try store(queue: queue, writer: writer)
        current.withLock { $0 = ["c": counting(laps: 0)] }
        queue.sync {
            store.beforeHandingOver = { history.handOverFlush() }
            history.append(interval(0xc1, endMs: wall), flush: .afterTelling)
            store.saveSoon(["c"])
        }
        queue.sync {}
        writer.drain()
        queue.sync {}
        #expect(order.withLock { $0 } == ["flush"])
        #expect(try laps(inFileOf: "c") == 0)
        #expect(queue.sync { store.isAllSaved && history.flushesInFlight.isEmpty })
    }
}
