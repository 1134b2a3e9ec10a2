import Foundation
import Glibc
import LinuxSystem
import StopwatchProtocol
@testable import StopwatchDaemon
import TestSupport
import Testing
import Varlink

/// An interval's `phase` (the label of the cycle phase it was) in the month files: written,
/// read back by every path that reads lines (the parse and its fast paths), kept through
/// corrections, and a bad one costs its line only.
@Suite("history: phases")
final class HistoryPhaseTests {
    let root: String
    let logged = Locked<[String]>([])
    /// 2023-11-14 22:13:20 UTC.
    static let now: Int64 = 1_700_000_000_000

    init() throws {
        var template = Array("/tmp/swphase-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    func fixture() -> StopwatchServiceFixture {
        StopwatchServiceFixture(now: .seconds(100), historyDirectory: root, wallClock: ManualWallClock(Self.now), logged: logged)
    }

    func lines() throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.hasSuffix(".jsonl") }.sorted()
        return try names.flatMap { try String(contentsOfFile: root + "/" + $0, encoding: .utf8).split(separator: "\n").map(String.init) }
    }

    static func line(_ interval: Interval) -> [UInt8] {
        var bytes: [UInt8] = []
        HistoryLine.encode(interval, into: &bytes)
        bytes.removeLast()
        return bytes
    }

    static func parse(_ text: String) -> Interval? {
        Array(text.utf8).withUnsafeBytes { HistoryLine.parse($0) }
    }

    static let focus = Interval(
        id: "0123456789abcdef", name: "pomodoro", startMs: now - 1_500_000, endMs: now, elapsedMs: 1_500_000, phase: "focus"
    )

    @Test("an interval's phase is written as \"phase\" after its note, and read back; a line without one reads as before")
    func roundTrip() throws {
        #expect(String(decoding: Self.line(Self.focus), as: UTF8.self)
            == #"{"id":"0123456789abcdef","name":"pomodoro","start_ms":1699998500000,"end_ms":1700000000000,"elapsed_ms":1500000,"phase":"focus"}"#)
        var noted = Self.focus
        noted.note = "chapter 3"
        noted.phase = #"long "break" ☕"#
        #expect(String(decoding: Self.line(noted), as: UTF8.self).hasSuffix(#","note":"chapter 3","phase":"long \"break\" ☕"}"#))
        for interval in [Self.focus, noted] {
            let read = Self.line(interval).withUnsafeBytes { HistoryLine.parse($0) }
            #expect(read == interval)
        }
        // The same line in any shape the full parse reads: the same interval.
        #expect(Self.parse(#"{ "phase": "focus", "id": "0123456789abcdef", "name": "pomodoro", "start_ms": 1699998500000, "end_ms": 1700000000000, "elapsed_ms": 1500000 }"#) == Self.focus)
        #expect(Self.parse(#"{"id":"0123456789abcdef","name":"pomodoro","start_ms":1699998500000,"end_ms":1700000000000,"elapsed_ms":1500000,"phase":"f\u006fcus"}"#) == Self.focus)
        // Lines of earlier versions, and of a plain stopwatch: no phase.
        let earlier = try #require(Self.parse(#"{"name":"tea","start_ms":1000,"end_ms":2000,"elapsed_ms":1000,"note":"n"}"#))
        #expect(earlier.phase == nil && earlier.note == "n")
        var plain = Self.focus
        plain.phase = nil
        #expect(!String(decoding: Self.line(plain), as: UTF8.self).contains("phase"))
        #expect(Self.line(plain).withUnsafeBytes { HistoryLine.parse($0) }?.phase == nil)
    }

    @Test("the fast paths over lines never drop a phase: not copied as plain, and the times they read are the line's")
    func fastPaths() throws {
        let line = Self.line(Self.focus)
        line.withUnsafeBytes { bytes in
            // Copied into a reply as it is, it would lose nothing, but `plain` vouches for
            // lines that are exactly an interval without a note or phase: this one is parsed.
            #expect(HistoryLine.plain(bytes) == nil)
            // What the passes over lines read without a parse, when they read anything, is right.
            if let times = HistoryLine.plainStartAndEnd(bytes) {
                #expect(times.start == Self.focus.startMs && times.end == Self.focus.endMs)
            }
            #expect((HistoryLine.plainEnd(bytes) ?? HistoryLine.parse(bytes)?.endMs) == Self.focus.endMs)
            #expect(!HistoryLine.isCorrection(bytes))
            #expect(HistoryLine.mayHaveID("0123", bytes) && !HistoryLine.mayHaveID("0124", bytes))
            #expect(HistoryLine.parse(bytes)?.phase == "focus")
        }
        // A name that ends as a phase key would: still the name.
        let tricky = Interval(id: "0123456789abcdef", name: #"x","phase":"y"#, startMs: 1, endMs: 2, elapsedMs: 1)
        let read = Self.line(tricky).withUnsafeBytes { HistoryLine.parse($0) }
        #expect(read == tricky && read?.phase == nil)
    }

    @Test("a phase that is not a phase's label makes the line no interval (skipped and counted, never a trap)", arguments: [
        #""phase":7"#, #""phase":true"#, #""phase":["focus"]"#, #""phase":{"label":"focus"}"#, #""phase":1.5"#,
        #""phase":"""#, #""phase":"a/b""#, #""phase":" focus""#, #""phase":"..""#, #""phase":"\u0007""#,
        #""phase":"\#(String(repeating: "x", count: 33))""#, #""phase":"focus","phase":"break""#,
    ])
    func badPhase(field: String) throws {
        let text = #"{"id":"0123456789abcdef","name":"tea","start_ms":1000,"end_ms":2000,"elapsed_ms":1000,\#(field)}"#
        #expect(Self.parse(text) == nil)
        // In a month file, beside good lines: those are read, it is counted once.
        let good = #"{"id":"fedcba9876543210","name":"tea","start_ms":3000,"end_ms":4000,"elapsed_ms":1000,"phase":"focus"}"#
        try (text + "\n" + good + "\n").write(toFile: root + "/1970-01.jsonl", atomically: false, encoding: .utf8)
        let f = fixture()
        let read = f.historyIntervals()
        #expect(read.map(\.id) == ["fedcba9876543210"])
        #expect(read.first?.phase == "focus")
        #expect(logged.withLock { $0 }.filter { $0.contains("holds 1 line that are not intervals") }.count == 1, "\(logged.withLock { $0 })")
    }

    @Test("the longest label, escapes and all, reads back; a null phase is none, as a null note is")
    func edgePhases() throws {
        let longest = String(repeating: "\"", count: 32)
        var interval = Self.focus
        interval.phase = longest
        #expect(Self.line(interval).withUnsafeBytes { HistoryLine.parse($0) }?.phase == longest)
        let null = Self.parse(#"{"id":"0123456789abcdef","name":"tea","start_ms":1000,"end_ms":2000,"elapsed_ms":1000,"phase":null}"#)
        #expect(null != nil && null?.phase == nil)
    }

    @Test("History replies carry the phase, and their size bound counts it")
    func replies() throws {
        try (String(decoding: Self.line(Self.focus), as: UTF8.self) + "\n").write(toFile: root + "/2023-11.jsonl", atomically: false, encoding: .utf8)
        let f = fixture()
        #expect(f.historyIntervals().map(\.phase) == ["focus"])
        // The widest interval with a phase: every byte escaped where it can be, the longest
        // numbers. The bound is never below what `add` writes.
        var wide = Interval(
            id: "0123456789abcdef", name: "\"", startMs: Int64.max, endMs: Int64.max, elapsedMs: Int64.max,
            phase: String(repeating: "\"", count: 32), device: ""
        )
        var reply = HistoryReply(granted: 1 << 20)
        let before = reply.bytes.count
        let added = reply.add(wide, batchSize: 10)
        #expect(added)
        let written = reply.bytes.count - before
        #expect(written <= HistoryReply.bound(wide), "\(written) bytes, bound \(HistoryReply.bound(wide))")
        wide.phase = nil
        #expect(HistoryReply.bound(wide) < written, "the bound grows with the phase")
    }

    @Test("Amend keeps an interval's phase, on disk and after a restart; Track makes none; a correction line carries it")
    func corrections() throws {
        try (String(decoding: Self.line(Self.focus), as: UTF8.self) + "\n").write(toFile: root + "/2023-11.jsonl", atomically: false, encoding: .utf8)
        let f = fixture()
        guard case .success(.reply(let reply)) = f.call("Amend", ["id": .string(Self.focus.id), "note": .string("chapter 3")]),
            let json = reply["interval"]
        else {
            Issue.record("Amend refused")
            return
        }
        let amended = try Interval(json: json)
        #expect(amended.phase == "focus" && amended.note == "chapter 3")
        #expect(f.historyIntervals().map(\.phase) == ["focus"])
        let amendLine = try #require(try lines().first { $0.hasPrefix(#"{"op":"amend""#) })
        #expect(amendLine.hasSuffix(#","note":"chapter 3","phase":"focus"}"#), "\(amendLine)")
        // A restart reads the amend line back with its phase.
        let again = fixture().historyIntervals()
        #expect(again.map(\.phase) == ["focus"] && again.map(\.note) == ["chapter 3"])
        // Renamed: still the phase it was.
        _ = f.call("Amend", ["id": .string(Self.focus.id), "name": .string("reading")])
        #expect(fixture().historyIntervals().map { [$0.name, $0.phase] } == [["reading", "focus"]])
        // Track: an interval of no cycle.
        guard case .success(.reply(let tracked)) = f.call(
            "Track", ["name": .string("call"), "start_ms": .int(Self.now - 7_200_000), "end_ms": .int(Self.now - 3_600_000)]
        ), let trackedJSON = tracked["interval"] else {
            Issue.record("Track refused")
            return
        }
        #expect(try Interval(json: trackedJSON).phase == nil)
        #expect(try lines().first { $0.hasPrefix(#"{"op":"track""#) }?.contains("phase") == false)
    }

    @Test("a correction line's phase is read as an interval line's: kept, and a bad one makes the correction damaged")
    func correctionLines() throws {
        let correction = HistoryCorrection(record: "1111111111111111", madeMs: Self.now, change: .form(.amend, id: Self.focus.id, interval: Self.focus))
        var bytes: [UInt8] = []
        correction.encode(into: &bytes)
        bytes.removeLast()
        #expect(String(decoding: bytes, as: UTF8.self).hasSuffix(#","phase":"focus"}"#))
        let read = bytes.withUnsafeBytes { HistoryCorrection.parse($0) }
        #expect(read == correction)
        let head = #"{"op":"amend","rec":"1111111111111111","made_ms":1700000000000,"id":"0123456789abcdef","name":"a","start_ms":1,"end_ms":2,"elapsed_ms":1"#
        for bad in [#","phase":7}"#, #","phase":"a/b"}"#, #","phase":""}"#] {
            #expect(Array((head + bad).utf8).withUnsafeBytes { HistoryCorrection.parse($0) } == nil, "\(bad)")
        }
        #expect(Array((head + "}").utf8).withUnsafeBytes { HistoryCorrection.parse($0) } != nil)
    }
}
