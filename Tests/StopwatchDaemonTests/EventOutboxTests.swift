import Foundation
import LinuxSystem
import StopwatchProtocol
import Testing
import Varlink
@testable import StopwatchDaemon

/// The outbox's lines, read back as written, and hostile ones refused.
@Suite("outbox lines")
struct OutboxLineTests {
    static let update = WatchUpdate(
        stopwatch: Stopwatch(name: "tea café", state: .counting, elapsedMs: 1500, lapsMs: [200, 900], targetMs: 1000),
        event: .expired
    )

    @Test("a run, a told expiry and a started mark read back as written, one line each")
    func roundTrip() throws {
        let lines: [OutboxLine] = [
            .run(OutboxRun(number: 7, atMs: 1_700_000_000_123, lateMs: 40, update: Self.update)),
            .told(ToldExpiry(name: "tea café", instant: .nanoseconds(123_456_789_012)), bootID: "boot-1"),
            .started(through: 7),
        ]
        for line in lines {
            let bytes = line.bytes
            #expect(bytes.last == UInt8(ascii: "\n"))
            #expect(bytes.dropLast().contains(UInt8(ascii: "\n")) == false)
            #expect(try OutboxLine(decoding: bytes.dropLast()) == line)
        }
        // What a hook reads on its standard input after a restart is what it would have read before.
        guard case .run(let run) = try OutboxLine(decoding: lines[0].bytes.dropLast()) else {
            Issue.record("not a run")
            return
        }
        #expect(run.update.json.serialized == Self.update.json.serialized)
    }

    @Test("anything else is refused with a reason, never trusted", arguments: [
        "", "not json", "[1,2]", #"{"other":1}"#,
        #"{"run":-1,"at_ms":0,"update":{"stopwatch":{"name":"x","state":"counting","elapsed_ms":0,"laps_ms":[]},"event":"start"}}"#,
        #"{"run":9007199254740993,"at_ms":0,"update":{"stopwatch":{"name":"x","state":"counting","elapsed_ms":0,"laps_ms":[]},"event":"start"}}"#,
        #"{"run":1,"update":{"stopwatch":{"name":"x","state":"counting","elapsed_ms":0,"laps_ms":[]},"event":"start"}}"#,
        #"{"run":1,"at_ms":0,"late_ms":-5,"update":{"stopwatch":{"name":"x","state":"counting","elapsed_ms":0,"laps_ms":[]},"event":"start"}}"#,
        #"{"run":1,"at_ms":0,"update":{"stopwatch":{"name":"a/b","state":"counting","elapsed_ms":0,"laps_ms":[]},"event":"start"}}"#,
        #"{"run":1,"at_ms":0,"update":{"stopwatch":{"name":"x\u0001","state":"counting","elapsed_ms":0,"laps_ms":[]},"event":"start"}}"#,
        #"{"run":1,"at_ms":0,"update":{"stopwatch":{"name":"x","state":"counting","elapsed_ms":0,"laps_ms":[]},"event":"explode"}}"#,
        #"{"told":"..","boot_id":"b","instant_ns":1}"#,
        #"{"told":"x","boot_id":"","instant_ns":1}"#,
        #"{"told":"x","boot_id":"b","instant_ns":1.5}"#,
        #"{"started":"3"}"#,
    ])
    func refused(line: String) {
        #expect(throws: MalformedMessage.self) { try OutboxLine(decoding: Array(line.utf8)[...]) }
    }
}

/// Reading the outbox at start, from bytes: no file, no clock.
@Suite("outbox scan")
struct OutboxScanTests {
    static func run(_ number: UInt64, _ name: String = "x") -> [UInt8] {
        OutboxLine.run(OutboxRun(
            number: number, atMs: 1000, lateMs: 0,
            update: WatchUpdate(stopwatch: Stopwatch(name: name, state: .counting, elapsedMs: 0), event: .start)
        )).bytes
    }

    static func scan(_ bytes: [UInt8], chunk: Int, lineLimit: Int = 4096) -> OutboxScan {
        var scan = OutboxScan(lineLimit: lineLimit, bootID: "boot-1")
        var start = 0
        while start < bytes.count {
            scan.feed(bytes[start..<min(start + chunk, bytes.count)])
            start += chunk
        }
        return scan
    }

    @Test("runs after the last started mark wait; told expiries of this boot only; whatever the chunks", arguments: [1, 7, 64, 100_000])
    func waiting(chunk: Int) {
        let told = ToldExpiry(name: "tea", instant: .seconds(5))
        let bytes = Self.run(1) + Self.run(2) + OutboxLine.started(through: 1).bytes
            + OutboxLine.told(told, bootID: "boot-1").bytes + OutboxLine.told(told, bootID: "boot-0").bytes
            + Self.run(3, "y")
        let scan = Self.scan(bytes, chunk: chunk)
        #expect(scan.waiting.map(\.number) == [2, 3])
        #expect(scan.told == [told])
        #expect(scan.toldLines == 2)
        #expect(scan.nextRun == 4)
        #expect(scan.badLines == 0 && scan.tornLength == 0)
        #expect(scan.wholeLength == Int64(bytes.count))
        // Each run's place is its line, without the newline.
        let third = scan.waiting[1]
        let line = bytes[Int(third.offset)..<Int(third.offset) + third.length]
        #expect(line.last != UInt8(ascii: "\n"))
        guard case .run(let run)? = try? OutboxLine(decoding: line) else {
            Issue.record("not a run")
            return
        }
        #expect(run.number == 3 && run.update.stopwatch.name == "y")
    }

    @Test("a torn last line is left out and measured; bad, overlong and out-of-order lines are skipped and counted", arguments: [1, 5, 4096])
    func tornAndBad(chunk: Int) {
        let torn = Array(Self.run(4).dropLast(9))
        let bytes = Self.run(2) + Array("garbage\n".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 300) + [10]
            + Self.run(1) + Self.run(3) + torn
        let scan = Self.scan(bytes, chunk: chunk, lineLimit: 200)
        #expect(scan.waiting.map(\.number) == [2, 3])
        #expect(scan.badLines == 3, "garbage, 300 bytes, run 1 after run 2")
        #expect(scan.firstBadLine?.hasPrefix("not JSON") == true)
        #expect(scan.tornLength == Int64(torn.count))
        #expect(scan.wholeLength == Int64(bytes.count - torn.count))
    }

    @Test("memory bounded whatever the file holds: the newest runs and told expiries kept, the waiting ones left out counted")
    func bounded() {
        var bytes: [UInt8] = []
        for number in UInt64(1)...10 { bytes += Self.run(number) }
        bytes += OutboxLine.started(through: 3).bytes
        for index in 0..<5 { bytes += OutboxLine.told(ToldExpiry(name: "t\(index)", instant: .seconds(Int64(index))), bootID: "boot-1").bytes }
        var scan = OutboxScan(lineLimit: 4096, bootID: "boot-1", maximumRuns: 4, maximumTold: 2)
        scan.feed(bytes[...])
        #expect(scan.waiting.map(\.number) == [7, 8, 9, 10])
        #expect(scan.droppedRuns == 3, "4, 5 and 6 waited; 1 to 3 had started")
        #expect(scan.told.map(\.name) == ["t3", "t4"])
        #expect(scan.toldLines == 5)
        #expect(scan.nextRun == 11)
    }

    @Test("a started mark beyond every run: none waits, and numbering goes on after it")
    func startedBeyond() {
        let scan = Self.scan(Self.run(1) + OutboxLine.started(through: 40).bytes, chunk: 16)
        #expect(scan.waiting.isEmpty)
        #expect(scan.nextRun == 41)
    }
}

/// The outbox on disk, in a directory of its own: what is written, read back at a restart,
/// cut and compacted. Its maintenance (flush, compaction) is waited for, never slept on.
@Suite("outbox file", .serialized)
final class EventOutboxTests {
    let root: String
    let lines = Locked<[String]>([])
    let wallClock = ManualWallClock(1_700_000_000_000)

    init() throws {
        var template = Array("/tmp/swo-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    var path: String { root + "/" + EventOutbox.fileName }
    var logger: Logger {
        let lines = self.lines
        return Logger(minimumLevel: .debug, journald: false) { line in lines.withLock { $0.append(line) } }
    }
    func log() -> String { lines.withLock { $0.joined() } }

    func outbox(backlog: Int = 100, bootID: String = "boot-1", compactAbove: Int64 = 1 << 20) throws -> EventOutbox {
        EventOutbox(
            directory: try DirectoryDescriptor.open(root), backlog: backlog, lineLimit: 1 << 20, logger: logger,
            wallClock: wallClock, bootID: bootID, compactAbove: compactAbove
        )
    }

    func contents() -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "<none>" }
    func size() -> Int { contents().utf8.count }

    static func event(_ name: String, _ kind: WatchEvent = .start, late: Duration = .zero) -> StopwatchEvent {
        StopwatchEvent(update: WatchUpdate(stopwatch: Stopwatch(name: name, state: .counting, elapsedMs: 10), event: kind), late: late)
    }

    /// Takes every waiting run, marking each started; their names.
    func takeAll(_ outbox: EventOutbox) -> [String] {
        var names: [String] = []
        while let (number, event) = outbox.takeNext() {
            names.append(event.name)
            outbox.started(number)
        }
        return names
    }

    @Test("a batch is one write of its lines; runs are taken in order and marked started")
    func recordAndTake() throws {
        let outbox = try outbox()
        outbox.record(EventBatch(events: [Self.event("a"), Self.event("b")], expiries: [ToldExpiry(name: "a", instant: .seconds(3))]), withRuns: true)
        let written = contents().split(separator: "\n")
        #expect(written.count == 3)
        #expect(written.first?.hasPrefix(#"{"told":"a","boot_id":"boot-1","instant_ns":3000000000}"#) == true)
        #expect(outbox.hasRuns && outbox.waitingCount == 2)
        let (first, event) = try #require(outbox.takeNext())
        #expect(event == Self.event("a"), "read back from the file as it was told")
        #expect(outbox.waitingCount == 1 && outbox.hasRuns)
        outbox.started(first)
        #expect(contents().hasSuffix(#"{"started":1}"# + "\n"))
        #expect(takeAll(outbox) == ["b"])
        #expect(!outbox.hasRuns)
    }

    @Test("a run done before an older one (its hooks removed meanwhile) is marked only once the older has started")
    func startedOutOfOrder() throws {
        let outbox = try outbox()
        // With an expiry awaiting its save, so the file is not cut to nothing (on the outbox's
        // own queue, at any moment) once both have started: the lines stay to be read.
        let expiry = ToldExpiry(name: "a", instant: .seconds(1))
        outbox.record(EventBatch(events: [Self.event("a"), Self.event("b")], expiries: [expiry]), withRuns: true)
        let (first, _) = try #require(outbox.takeNext())
        let (second, _) = try #require(outbox.takeNext())
        // The runner found no hook for the second while the first still waits for a slot.
        outbox.started(second)
        #expect(!contents().contains(#"{"started""#), "nothing before the first is started yet")
        outbox.started(first)
        #expect(contents().hasSuffix(#"{"started":2}"# + "\n"))
        #expect(!outbox.hasRuns)
    }

    @Test("with no runs to keep and no expiry, nothing is written")
    func nothingWithoutHooks() throws {
        let outbox = try outbox()
        outbox.record(EventBatch(events: [Self.event("a")]), withRuns: false)
        #expect(size() == 0)
        #expect(!outbox.hasRuns)
        outbox.record(EventBatch(events: [Self.event("a", .expired)], expiries: [ToldExpiry(name: "a", instant: .seconds(1))]), withRuns: false)
        #expect(contents().hasPrefix(#"{"told":"a""#) && !outbox.hasRuns)
    }

    @Test("once every run has started and the expiries are saved, the file is cut to nothing")
    func cutWhenDone() throws {
        let outbox = try outbox()
        outbox.record(EventBatch(events: [Self.event("a")], expiries: [ToldExpiry(name: "a", instant: .seconds(1))]), withRuns: true)
        _ = takeAll(outbox)
        outbox.waitForMaintenance()
        #expect(size() > 0, "the told expiry waits for its save")
        outbox.expiriesSaved()
        outbox.waitForMaintenance()
        #expect(size() == 0)
        // Written again from the start.
        outbox.record(EventBatch(events: [Self.event("b")]), withRuns: true)
        #expect(contents().hasPrefix(#"{"run":2,"#))
        #expect(takeAll(outbox) == ["b"])
    }

    @Test("a restart: the runs not started wait, late by the time since; told expiries of this boot only")
    func restart() throws {
        do {
            let first = try outbox()
            first.record(EventBatch(events: [Self.event("a"), Self.event("b", .expired, late: .milliseconds(30))], expiries: [
                ToldExpiry(name: "b", instant: .seconds(9)),
            ]), withRuns: true)
            let (number, _) = try #require(first.takeNext())
            first.started(number)
            // One outbox at a time on a file, as one daemon holds the state directory.
            first.waitForMaintenance()
        }
        wallClock.advance(by: 5000)
        let second = try outbox()
        #expect(second.restoredExpiries == [ToldExpiry(name: "b", instant: .seconds(9))])
        #expect(second.waitingCount == 1)
        #expect(log().contains("1 hook run left waiting by the last stopwatchd: run now, late"))
        let (number, event) = try #require(second.takeNext())
        #expect(event.name == "b")
        #expect(event.late == .milliseconds(5030), "from the instant it fell, not from the restart")
        second.started(number)
        // Numbering goes on; another boot's told expiries are not this boot's.
        second.record(EventBatch(events: [Self.event("c")]), withRuns: true)
        #expect(contents().contains(#"{"run":3,"#))
        second.waitForMaintenance()
        let third = try outbox(bootID: "boot-2")
        #expect(third.restoredExpiries.isEmpty)
        #expect(third.waitingCount == 1)
    }

    @Test("a torn last line is cut at start and logged; bad lines are skipped and logged; the rest runs")
    func tornAndBadAtStart() throws {
        let run = OutboxScanTests.run(1, "kept") + OutboxScanTests.run(2, "cut")
        let damaged = Array("{\"nonsense\n".utf8) + run.dropLast(10)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(damaged)))
        let outbox = try outbox()
        #expect(log().contains("cut a torn last line"))
        #expect(log().contains("skipped 1 unreadable line of outbox.jsonl"))
        #expect(size() == damaged.count - (OutboxScanTests.run(2, "cut").count - 10))
        #expect(takeAll(outbox) == ["kept"])
    }

    @Test("a FIFO or a symbolic link in its place is moved aside and a new one made", arguments: ["fifo", "link"])
    func notARegularFile(kind: String) throws {
        if kind == "fifo" {
            #expect(mkfifo(path, 0o600) == 0)
        } else {
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/etc/passwd")
        }
        let outbox = try outbox()
        #expect(log().contains("moved it to outbox.jsonl.corrupt-"), "\(log())")
        outbox.record(EventBatch(events: [Self.event("a")]), withRuns: true)
        #expect(contents().hasPrefix(#"{"run":1,"#))
        #expect((try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeRegular)
        #expect(takeAll(outbox) == ["a"])
    }

    @Test("beyond the backlog the oldest waiting are dropped: said when it begins, counted when it ends, not run after a restart")
    func backlog() throws {
        do {
            let outbox = try outbox(backlog: 3)
            outbox.record(EventBatch(events: (0..<5).map { Self.event("e\($0)") }), withRuns: true)
            #expect(outbox.waitingCount == 3)
            #expect(log().contains("more than 3 runs wait (--hook-backlog); dropping the oldest until they are fewer"))
            // One outbox at a time on a file, as one daemon holds the state directory.
            outbox.waitForMaintenance()
        }
        let restarted = try outbox(backlog: 3)
        #expect(restarted.waitingCount == 3)
        #expect(takeAll(restarted) == ["e2", "e3", "e4"])
        #expect(!log().contains("dropped: more than 3 were waiting"), "counted by the daemon that dropped them")
        restarted.waitForMaintenance()
        // A smaller backlog at the next start: the oldest waiting are left out, and said so.
        do {
            let again = try outbox(backlog: 3)
            again.record(EventBatch(events: [Self.event("g0"), Self.event("g1"), Self.event("g2")]), withRuns: true)
            again.waitForMaintenance()
        }
        let smaller = try outbox(backlog: 2)
        #expect(log().contains("more than 2 runs wait (--hook-backlog); dropping the oldest until they are fewer"))
        #expect(takeAll(smaller) == ["g1", "g2"])
        #expect(log().contains("hooks: 1 run dropped: more than 2 were waiting (--hook-backlog)"))
        smaller.waitForMaintenance()
        let outbox = try outbox(backlog: 1)
        outbox.record(EventBatch(events: [Self.event("f0"), Self.event("f1")]), withRuns: true)
        #expect(takeAll(outbox) == ["f1"])
        #expect(log().contains("hooks: 1 run dropped: more than 1 were waiting (--hook-backlog)"))
    }

    @Test("while runs keep waiting, the part before the oldest is dropped by an atomic replace; offsets follow")
    func compaction() throws {
        let outbox = try outbox(compactAbove: 1000)
        for index in 0..<40 { outbox.record(EventBatch(events: [Self.event("r\(index)")]), withRuns: true) }
        let before = size()
        var taken: [String] = []
        for _ in 0..<30 {
            let (number, event) = try #require(outbox.takeNext())
            taken.append(event.name)
            outbox.started(number)
        }
        outbox.waitForMaintenance()
        // Replaced once the dead part passed both bounds (when, depends on the maintenance
        // queue's turns): the first runs are gone, the waiting ones are there.
        #expect(size() < before, "\(size()) of \(before)")
        #expect(!contents().contains(#"{"run":1,"#) && contents().contains(#"{"run":40,"#))
        #expect(!FileManager.default.fileExists(atPath: root + "/" + EventOutbox.temporaryName))
        // Lines added after the replace follow the kept ones; every run is read back whole.
        outbox.record(EventBatch(events: [Self.event("late")]), withRuns: true)
        let rest = takeAll(outbox)
        #expect(taken + rest == (0..<40).map { "r\($0)" } + ["late"])
        // And a restart reads the replaced file.
        outbox.record(EventBatch(events: [Self.event("after")]), withRuns: true)
        outbox.waitForMaintenance()
        let restarted = try self.outbox()
        #expect(takeAll(restarted) == ["after"])
    }

    @Test("no state directory: runs wait in memory, and a stop says they are lost")
    func inMemory() throws {
        let outbox = EventOutbox(directory: nil, backlog: 10, lineLimit: 1 << 20, logger: logger)
        outbox.record(EventBatch(events: [Self.event("m", .expired, late: .seconds(2))], expiries: [ToldExpiry(name: "m", instant: .seconds(1))]), withRuns: true)
        #expect(outbox.hasRuns)
        outbox.flushBeforeExit()
        #expect(log().contains("1 hook run could not be written to outbox.jsonl"))
        let (number, event) = try #require(outbox.takeNext())
        #expect(event == Self.event("m", .expired, late: .seconds(2)))
        outbox.started(number)
        #expect(!outbox.hasRuns)
    }
}
