import Foundation
import LinuxSystem
import StopwatchProtocol
import StopwatchdClient
import Testing
import Varlink

/// `History` streams against readers that do not read, read slowly, or end their input
/// (SPEC §3 `History`): the daemon's memory stays within `--history-memory`, a paused reader
/// is not cut off, and a call made before the end of input is answered in full.
@Suite("history streams: stalled, paused and half-closed readers")
struct HistoryStreamTests {
    let directory: TestDirectory

    init() throws {
        directory = try TestDirectory()
    }

    /// Interval `index` of the histories written here: its start is its index, so order and
    /// duplicates show; every third is named "b", the rest "a".
    static func interval(_ index: Int) -> Interval {
        let start = Int64(1_767_261_600_000 + index)
        return Interval(name: index % 3 == 0 ? "b" : "a", startMs: start, endMs: start + 1_000, elapsedMs: 1_000)
    }

    /// Writes intervals 0..<count as the daemon's January 2026, in its state directory.
    func writeHistory(_ count: Int) throws {
        let state = DaemonProcess.stateDirectory(for: directory.socket)
        let history = state + "/history"
        try FileManager.default.createDirectory(atPath: history, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: state)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * 90)
        for index in 0..<count {
            let interval = Self.interval(index)
            bytes += Array(#"{"name":"\#(interval.name)","start_ms":\#(interval.startMs),"end_ms":\#(interval.endMs!),"elapsed_ms":1000}"#.utf8)
            bytes.append(UInt8(ascii: "\n"))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: history + "/2026-01.jsonl"))
    }

    /// Where `intervals` differ from the written ones `expected` (indexes into the history),
    /// in a few words; nil when they are the same, in the same order.
    /// Ids (derived from the lines, which have none) and the device's name are not compared.
    static func difference(_ intervals: [Interval], _ expected: some Sequence<Int>) -> String? {
        let expected = expected.map { Self.interval($0) }
        let intervals = intervals.map { interval in
            var interval = interval
            interval.id = ""
            interval.device = ""
            return interval
        }
        if intervals == expected { return nil }
        let first = zip(intervals, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(intervals.count, expected.count)
        return "\(intervals.count) intervals of \(expected.count), first difference at \(first)"
    }

    /// The intervals in the History replies of `text` (NUL-separated), and whether the last
    /// one ended the stream.
    static func intervals(inReplies replies: [JSONObject]) -> (intervals: [Interval], complete: Bool) {
        var intervals: [Interval] = []
        for reply in replies {
            guard case .array(let items)? = reply.parameters["intervals"] else { return (intervals, false) }
            intervals += items.compactMap { try? Interval(json: $0) }
            if reply["continues"] != .bool(true) { return (intervals, true) }
        }
        return (intervals, false)
    }

    /// Reads History replies from `connection` until the one without `continues`.
    static func readStream(_ connection: RawConnection) throws -> (intervals: [Interval], complete: Bool) {
        var replies: [JSONObject] = []
        while let reply = try connection.reply(timeout: .seconds(60)) {
            replies.append(reply)
            if reply["continues"] != .bool(true) { break }
        }
        return intervals(inReplies: replies)
    }

    /// Waits until the daemon's CPU time stops growing (for `quiet`), sampling its owned
    /// memory meanwhile; the largest sample.
    static func peakOwnedKiBUntilIdle(_ pid: pid_t, quiet: Duration = .milliseconds(600)) -> Int {
        var peak = DaemonMemory.ownedKiB(of: pid) ?? 0
        var lastCPU = DaemonMemory.cpuTicks(of: pid)
        var quietSince = ContinuousClock.now
        Deadline.wait(.seconds(120)) {
            peak = max(peak, DaemonMemory.ownedKiB(of: pid) ?? 0)
            let cpu = DaemonMemory.cpuTicks(of: pid)
            if cpu != lastCPU {
                lastCPU = cpu
                quietSince = ContinuousClock.now
            }
            return ContinuousClock.now - quietSince >= quiet
        }
        return max(peak, DaemonMemory.ownedKiB(of: pid) ?? 0)
    }

    @Test("readers that send History with more and never read hold the daemon within --history-memory; each then gets every interval once, in order")
    func stalledReadersStayWithinTheBudget() throws {
        let readers = Binaries.sanitized ? 12 : 32
        let count = 11_000
        try writeHistory(count)
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--history-memory", "1MiB"])
        let client = StopwatchClient(socketPath: daemon.socket, timeout: .seconds(60))
        // Warmed up: one History read whole, so what the first costs once is in the baseline.
        var warmUp = 0
        let first = try client.history()
        while let batch = try first.next() { warmUp += batch.count }
        #expect(warmUp == count)
        let baseline = try #require(DaemonMemory.ownedKiB(of: daemon.pid))

        let streams = try (0..<readers).map { _ in try client.history() }
        let peak = Self.peakOwnedKiBUntilIdle(daemon.pid)
        // Without the budget each would hold a reply of 10,000 intervals and the next (about
        // 1 MB; 64 such readers took the daemon from 1 to 86 MiB). With it: the budget
        // (1 MiB), a small reply for each reader (16 KiB), and what the connections hold.
        // Not under a sanitizer: AddressSanitizer keeps freed memory back on purpose.
        if !Binaries.sanitized {
            #expect(peak - baseline <= 12 * 1024, "owned memory grew by \(peak - baseline) KiB from \(baseline) KiB")
        }
        for (index, stream) in streams.enumerated() {
            var intervals: [Interval] = []
            while let batch = try stream.next() {
                #expect(batch.count <= 10_000)
                intervals += batch
            }
            let difference = Self.difference(intervals, 0..<count)
            #expect(difference == nil, "reader \(index): \(difference ?? "")")
        }
    }

    @Test("a reader that takes nothing for longer than --write-timeout is not cut off: the whole History comes when it reads")
    func pausedReaderIsNotCutOff() throws {
        let count = 30_000
        try writeHistory(count)
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--write-timeout", "1s"])
        let connection = try RawConnection(daemon.socket)
        try connection.call("io.stopwatchd.History", more: true)
        // Five write timeouts without reading (fewer could pass on the old code on a loaded
        // machine, before the daemon's output stalled): the daemon's output stalls (30,000
        // intervals are more than the socket holds) and must not end the connection.
        #expect(try !connection.hangsUp(timeout: .seconds(5)))
        let stream = try Self.readStream(connection)
        #expect(stream.complete)
        #expect(Self.difference(stream.intervals, 0..<count) == nil)
    }

    /// Where plain replies go beside a History call sent in the same write.
    enum PlainRepliesPlace: String, CaseIterable, CustomTestStringConvertible {
        case behindHistory = "40 List behind a History"
        case aheadOfHistory = "10 List ahead of a History"
        var testDescription: String { rawValue }
    }

    @Test(
        "replies to plain calls sent beside a History, never read, are held to --write-timeout: the History's exemption covers only its own replies",
        arguments: PlainRepliesPlace.allCases
    )
    func plainRepliesBesideHistoryAreTimedOut(_ place: PlainRepliesPlace) throws {
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--write-timeout", "1s"])
        // 200 stopwatches of long names: a List reply of about 24 KB. Ten of them are more
        // than the socket's buffer takes (about 210 KB) and less than the connection's high
        // water (256 KiB), so the History behind them is answered while some of their
        // bytes are still in the daemon's output.
        let setup = try RawConnection(daemon.socket)
        let long = String(repeating: "x", count: 55)
        for index in 0..<200 {
            try setup.call("io.stopwatchd.Start", #"{"name":"\#(long)\#(index)"}"#)
            #expect(try setup.reply()?.errorName == nil)
        }
        let history = Array(#"{"method":"io.stopwatchd.History","parameters":{"name":"none"},"more":true}"#.utf8) + [0]
        let list = Array(#"{"method":"io.stopwatchd.List","parameters":{}}"#.utf8) + [0]
        let bytes: [UInt8] = switch place {
        case .behindHistory: history + Array(Array(repeating: list, count: 40).joined())
        case .aheadOfHistory: Array(Array(repeating: list, count: 10).joined()) + history
        }
        let connection = try RawConnection(daemon.socket)
        try connection.send(bytes)
        // Never read: the daemon ends the connection after its write timeout (1 s), as it
        // does without the History. Before, the History made it wait for ever.
        #expect(try connection.hangsUp(timeout: .seconds(15)))
    }

    @Test("swctl log --csv into a reader that pauses longer than --write-timeout prints the whole log, exit 0")
    func slowConsumerOfSwctlLog() throws {
        // Five replies at least, so that the daemon has some unsent when the reader pauses.
        let count = Binaries.sanitized ? 50_000 : 100_000
        try writeHistory(count)
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--write-timeout", "1s"])
        // `swctl log --csv | (sleep 35; wc -l)`, with the daemon's write timeout at 1 s.
        let script = #"{ "$0" --socket "$1" log --csv; echo "swctl exited $?" >&2; } | { sleep 4; wc -l; }"#
        let result = try ChildProcess.run(
            "/bin/sh", ["-c", script, Binaries.swctl, daemon.socket], environment: Binaries.childEnvironment, timeout: .seconds(120)
        )
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(count + 1)")
        #expect(result.error == "swctl exited 0\n", "\(result.error)")
    }

    @Test("History then end of input (shutdown of the writing side): answered in full, with and without more, then closed")
    func answeredAfterEndOfInput() throws {
        let count = 25_000
        try writeHistory(count)
        let daemon = try DaemonProcess(socket: directory.socket)
        let named: (String) -> [Int] = { name in (0..<count).filter { Self.interval($0).name == name } }

        let withMore = try RawConnection(daemon.socket)
        try withMore.call("io.stopwatchd.History", more: true)
        withMore.finishSending()
        let streamed = try Self.readStream(withMore)
        #expect(streamed.complete)
        #expect(Self.difference(streamed.intervals, 0..<count) == nil)
        #expect(try withMore.closesByPeer())

        // Without more: one reply, of the 8,334 named "b".
        let withoutMore = try RawConnection(daemon.socket)
        try withoutMore.call("io.stopwatchd.History", #"{"name":"b"}"#)
        withoutMore.finishSending()
        let reply = try #require(try withoutMore.reply(timeout: .seconds(60)))
        let single = Self.intervals(inReplies: [reply])
        #expect(single.complete)
        #expect(Self.difference(single.intervals, named("b")) == nil)
        #expect(try withoutMore.closesByPeer())

        // Two calls then the end: both answered, in order.
        let pipelined = try RawConnection(daemon.socket)
        try pipelined.call("io.stopwatchd.History", #"{"name":"a"}"#, more: true)
        try pipelined.call("io.stopwatchd.History", #"{"name":"b"}"#, more: true)
        pipelined.finishSending()
        let first = try Self.readStream(pipelined)
        let second = try Self.readStream(pipelined)
        #expect(first.complete && second.complete)
        #expect(Self.difference(first.intervals, named("a")) == nil)
        #expect(Self.difference(second.intervals, named("b")) == nil)
        #expect(try pipelined.closesByPeer())
    }

    @Test("swctl bridge with History then the end of its input relays every interval, exit 0")
    func bridgeAnswersHistoryAfterEndOfInput() throws {
        let count = 25_000
        try writeHistory(count)
        let daemon = try DaemonProcess(socket: directory.socket)
        let calls = directory.file("calls")
        try (#"{"method":"io.stopwatchd.History","parameters":{},"more":true}"# + "\0").write(toFile: calls, atomically: true, encoding: .utf8)
        // `printf '…History…\0' | swctl bridge`: standard input ends right behind the call.
        let result = try ChildProcess.run(
            "/bin/sh", ["-c", #"exec "$0" --socket "$1" bridge < "$2""#, Binaries.swctl, daemon.socket, calls],
            environment: Binaries.childEnvironment, timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.error)")
        let replies = try result.output.split(separator: "\0").map { text -> JSONObject in
            guard case .object(let object) = try JSONParser.parse(String(text)) else { throw MalformedMessage("not an object") }
            return object
        }
        let stream = Self.intervals(inReplies: replies)
        #expect(stream.complete)
        #expect(Self.difference(stream.intervals, 0..<count) == nil)
    }
}
