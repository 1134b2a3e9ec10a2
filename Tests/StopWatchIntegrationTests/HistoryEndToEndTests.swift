import Foundation
import LinuxSystem
import StopwatchProtocol
import TestSupport
import Testing
import Varlink

/// The history end to end: what the daemon journals, as `swctl log` and `swctl report`
/// print it (SPEC §4 "History", §5 `log`/`report`).
@Suite("history: swctl log and report against the daemon")
struct HistoryEndToEndTests {
    let directory: TestDirectory

    init() throws {
        directory = try TestDirectory()
    }

    var stateDirectory: String { DaemonProcess.stateDirectory(for: directory.socket) }

    func swctl(_ arguments: [String], environment: [String: String] = [:]) throws -> Swctl {
        try Swctl.run(arguments, socket: directory.socket, environment: environment)
    }

    func elapsed(_ result: Swctl) throws -> Int64 {
        try Stopwatch(json: try JSONParser.parse(result.output.trimmingCharacters(in: .newlines))).elapsedMs
    }

    func log(_ arguments: [String] = []) throws -> [Interval] {
        let result = try swctl(["--json", "log"] + arguments)
        #expect(result.status == 0, "\(result.error)")
        guard case .array(let items) = try JSONParser.parse(result.output.trimmingCharacters(in: .newlines)) else {
            Issue.record("log --json printed no array: \(result.output)")
            return []
        }
        return try items.map { try Interval(json: $0) }
    }

    @Test("start and stop cycles: swctl log --json is what was done, in order")
    func cycles() throws {
        let daemon = try DaemonProcess(socket: directory.socket)
        let names = ["work", "tea", "work", "client call", "work"]
        var stoppedAt: [String: Int64] = [:]
        var expected: [(name: String, elapsedMs: Int64)] = []
        for (index, name) in names.enumerated() {
            #expect(try swctl(["--json", index.isMultiple(of: 2) ? "start" : "toggle", name]).status == 0)
            let stop = try swctl(["--json", index.isMultiple(of: 2) ? "toggle" : "stop", name])
            #expect(stop.status == 0, "\(stop.error)")
            let total = try elapsed(stop)
            expected.append((name, total - stoppedAt[name, default: 0]))
            stoppedAt[name] = total
        }
        // A lap, a target and a counting one: only the counting one adds an interval, open.
        #expect(try swctl(["start", "open"]).status == 0)
        #expect(try swctl(["lap", "open"]).status == 0)
        #expect(try swctl(["timer", "open", "1h", "--keep"]).status == 0)
        let intervals = try log()
        try #require(intervals.count == names.count + 1, "\(intervals)")
        for (interval, (name, elapsedMs)) in zip(intervals, expected) {
            #expect(interval.name == name)
            // The reply's elapsed time is read a moment after the interval's end.
            #expect(abs(interval.elapsedMs - elapsedMs) <= 2, "\(interval) vs \(elapsedMs)")
            let end = try #require(interval.endMs)
            #expect(end - interval.startMs == interval.elapsedMs)
        }
        for (earlier, later) in zip(intervals.dropLast(2), intervals.dropFirst().dropLast()) {
            #expect(earlier.endMs! <= later.endMs!)
        }
        let open = try #require(intervals.last)
        #expect(open.name == "open" && open.endMs == nil)
        // One name only, and a range that ends before all of it.
        #expect(try log(["work"]).map(\.name) == ["work", "work", "work"])
        #expect(try log(["--until", "2000-01-01"]).isEmpty)
        // A removed stopwatch's history stays; removing a counting one ends its interval.
        #expect(try swctl(["remove", "open"]).status == 0)
        let afterRemove = try log(["open"])
        #expect(afterRemove.count == 1 && afterRemove.first?.endMs != nil)
        // Names as given: "café" in NFC and in NFD are two stopwatches with two histories.
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        for name in [composed, decomposed, decomposed] {
            #expect(try swctl(["start", name]).status == 0)
            #expect(try swctl(["stop", name]).status == 0)
        }
        #expect(try log([composed]).map { Array($0.name.utf8) } == [Array(composed.utf8)])
        #expect(try log([decomposed]).map { Array($0.name.utf8) } == [Array(decomposed.utf8), Array(decomposed.utf8)])
        _ = daemon
    }

    @Test("kill -9 right after a stop's reply: the interval is in the history after a restart")
    func killedAfterStop() throws {
        var daemon = try DaemonProcess(socket: directory.socket)
        #expect(try swctl(["start", "crash"]).status == 0)
        let stop = try swctl(["--json", "stop", "crash"])
        #expect(stop.status == 0)
        #expect(daemon.stop(SIGKILL) == 128 + SIGKILL)
        daemon = try DaemonProcess(socket: directory.socket)
        let intervals = try log()
        #expect(intervals.count == 1)
        #expect(intervals.first?.name == "crash")
        #expect(try abs((intervals.first?.elapsedMs ?? -100) - elapsed(stop)) <= 2)
        _ = daemon
    }

    /// Central European time as a POSIX rule, which needs no zoneinfo files: +01:00, and
    /// +02:00 from the last Sunday of March, 02:00, to the last Sunday of October, 03:00.
    static let berlin = ["TZ": "CET-1CEST,M3.5.0,M10.5.0/3"]

    @Test("report --by day splits at local midnight, through a DST change, under TZ")
    func byDayAcrossMidnight() throws {
        // 2026-03-28 22:00 +01:00 to 2026-03-29 03:00 +02:00 (the clocks skip 02:00-03:00):
        // four hours, two on each day. And 2026-03-29 23:30 +02:00 to 2026-03-30 00:45
        // +02:00: 30 min on the 29th, 45 on the 30th.
        let lines = [
            #"{"name":"night","start_ms":1774731600000,"end_ms":1774746000000,"elapsed_ms":14400000}"#,
            #"{"name":"late","start_ms":1774819800000,"end_ms":1774824300000,"elapsed_ms":4500000}"#,
        ]
        let history = stateDirectory + "/history"
        try FileManager.default.createDirectory(atPath: history, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: stateDirectory)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: history + "/2026-03.jsonl"))
        let daemon = try DaemonProcess(socket: directory.socket)
        let report = try swctl(["report", "--by", "day", "--csv", "--since", "2026-03-28", "--until", "2026-03-31"], environment: Self.berlin)
        #expect(report.status == 0, "\(report.error)")
        #expect(report.lines == [
            "day,name,elapsed_ms",
            "2026-03-28,night,7200000",
            "2026-03-29,night,7200000",
            "2026-03-29,late,1800000",
            "2026-03-30,late,2700000",
        ])
        // From the 29th on, only what fell on it and later counts.
        let clipped = try swctl(["report", "--csv", "--since", "2026-03-29"], environment: Self.berlin)
        #expect(clipped.lines == ["name,elapsed_ms", "night,7200000", "late,4500000"])
        // The CSV log in local time with offsets, before and after the change.
        let csv = try swctl(["log", "--csv", "night"], environment: Self.berlin)
        // Then the id (derived from the line, which has none) and no note.
        try #require(csv.lines.count == 2, "\(csv.output)")
        #expect(csv.lines[0] == "name,start,end,elapsed_ms,id,note")
        let fields = csv.lines[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        #expect(fields.prefix(4) == ["night", "2026-03-28T22:00:00+01:00", "2026-03-29T03:00:00+02:00", "14400000"], "\(csv.output)")
        #expect(fields.count == 6 && IntervalID.isValid(fields[4]) && fields[5].isEmpty, "\(csv.output)")
        _ = daemon
    }

    /// The history's device folder (the one 32-hex-digit folder in it), once the daemon made
    /// it: where the months are after the start (history format 2).
    func deviceFolder() throws -> String {
        let history = stateDirectory + "/history"
        let folders = try FileManager.default.contentsOfDirectory(atPath: history).filter { $0.utf8.count == 32 }
        #expect(folders.count == 1, "\(folders)")
        return history + "/" + (folders.first ?? "none")
    }

    /// Writes `lines` as the history's `file`, the state directory made as the daemon would
    /// (the last release's layout: the months at the top of history/, moved at the start).
    func writeHistory(_ file: String, _ text: String) throws {
        let history = stateDirectory + "/history"
        try FileManager.default.createDirectory(atPath: history, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: stateDirectory)
        try Data(text.utf8).write(to: URL(fileURLWithPath: history + "/" + file))
    }

    @Test("a torn last line (a crash mid-append) is cut off at start, and the rest is served")
    func tornLine() throws {
        let whole = #"{"name":"kept","start_ms":1767261600000,"end_ms":1767265200000,"elapsed_ms":3600000}"# + "\n"
        try writeHistory("2026-01.jsonl", whole + whole + #"{"name":"torn","start_ms":17672"#)
        let daemon = try DaemonProcess(socket: directory.socket)
        #expect(daemon.waitForLog(containing: "torn line"))
        #expect(try log().map(\.name) == ["kept", "kept"])
        let size = try FileManager.default.attributesOfItem(atPath: try deviceFolder() + "/2026-01.jsonl")[.size] as? Int
        #expect(size == 2 * whole.utf8.count)
    }

    @Test(
        "a month the daemon cannot open: report prints no totals, log stops, each with one line naming it and exit 70; all of it once it opens",
        .enabled(if: FileLease.work, "this file system takes no leases"),
        // The kernel breaks the lease lease-break-time seconds after the first open it refuses:
        // five swctl runs against the daemon must be done by then (45 s by default; 30 s is ample).
        .enabled(if: FileLease.lastsLongEnough(30), "leases are broken after /proc/sys/fs/lease-break-time = \(FileLease.breakTime.map { "\($0) s" } ?? "(unreadable)"), too soon for this test (it needs 30 s)")
    )
    func monthThatCannotBeOpened() throws {
        // 2025-01-01 and 2025-02-01, 10:00 to 11:00 UTC.
        try writeHistory("2025-01.jsonl", #"{"name":"jan","start_ms":1735725600000,"end_ms":1735729200000,"elapsed_ms":3600000}"# + "\n")
        try writeHistory("2025-02.jsonl", #"{"name":"feb","start_ms":1738404000000,"end_ms":1738407600000,"elapsed_ms":3600000}"# + "\n")
        let daemon = try DaemonProcess(socket: directory.socket)
        let lease = try FileLease(try deviceFolder() + "/2025-02.jsonl")
        for arguments in [["report"], ["report", "--by", "day", "--csv"], ["log", "--csv"], ["--json", "log"]] {
            let result = try swctl(arguments)
            #expect(result.status == 70, "\(arguments): \(result.status) \(result.error)")
            let errors = result.error.split(separator: "\n")
            #expect(errors.count == 1 && errors.first?.contains("2025-02.jsonl") == true, "\(arguments): \(result.error)")
            if arguments.first == "report" { #expect(result.output.isEmpty, "\(arguments): \(result.output)") }
        }
        lease.release()
        #expect(try swctl(["report", "--csv"]).lines == ["name,elapsed_ms", "feb,3600000", "jan,3600000"])
        _ = daemon
    }

    /// A C compiler to build `failingMonthStatus` with: `cc` or `clang` in PATH.
    static let cCompiler: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for name in ["cc", "clang"] {
            for directory in path.split(separator: ":") where access("\(directory)/\(name)", X_OK) == 0 {
                return "\(directory)/\(name)"
            }
        }
        return nil
    }()

    /// Builds a library for LD_PRELOAD whose `fstatat` fails with EIO for every name ending
    /// in `.jsonl` (a history month) and passes the others on: a disk error on a month's
    /// status, which no file on a healthy disk can give, while opening and reading it work.
    func failingMonthStatus() throws -> String {
        let source = directory.file("fail-month-status.c"), library = directory.file("fail-month-status.so")
        try #"""
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <errno.h>
            #include <string.h>

            /* struct stat and struct stat64 are one on 64-bit Linux: passed on as they are. */
            typedef int (*fstatat_function)(int, const char *, void *, int);

            static int fails(const char *name) {
                size_t length = strlen(name);
                return length >= 6 && strcmp(name + length - 6, ".jsonl") == 0;
            }

            static int pass(const char *symbol, int directory, const char *name, void *status, int flags) {
                if (fails(name)) {
                    errno = EIO;
                    return -1;
                }
                fstatat_function next = (fstatat_function)dlsym(RTLD_NEXT, symbol);
                return next(directory, name, status, flags);
            }

            int fstatat(int directory, const char *name, void *status, int flags) {
                return pass("fstatat", directory, name, status, flags);
            }

            int fstatat64(int directory, const char *name, void *status, int flags) {
                return pass("fstatat64", directory, name, status, flags);
            }
            """#.write(toFile: source, atomically: true, encoding: .utf8)
        let built = try ChildProcess.run(
            try #require(Self.cCompiler), ["-shared", "-fPIC", "-o", library, source, "-ldl"], environment: Binaries.childEnvironment
        )
        try #require(built.status == 0, "\(built.error)")
        return library
    }

    @Test(
        "a month whose status cannot be read (fstatat: EIO) fails History naming it, never read as an empty month",
        .enabled(if: cCompiler != nil, "no C compiler (cc or clang in PATH) to build the library that fails fstatat"),
        .enabled(if: !Binaries.sanitized, "a sanitizer's runtime, linked into the daemon, intercepts fstatat before a preloaded library")
    )
    func monthWhoseStatusFails() throws {
        try writeHistory("2025-01.jsonl", #"{"name":"jan","start_ms":1735725600000,"end_ms":1735729200000,"elapsed_ms":3600000}"# + "\n")
        let daemon = try DaemonProcess(socket: directory.socket, environment: ["LD_PRELOAD": try failingMonthStatus()])
        #expect(try swctl(["start", "tea"]).status == 0)
        for arguments in [["log", "--csv"], ["report", "--csv"]] {
            let result = try swctl(arguments)
            #expect(result.status == 70, "\(arguments): \(result.status) \(result.output) \(result.error)")
            #expect(result.error.contains("2025-01.jsonl") && result.error.contains(Errno(EIO).description), "\(arguments): \(result.error)")
        }
        #expect(daemon.waitForLog(containing: "cannot read the history's 2025-01.jsonl"), "\(daemon.readLog())")
    }

    @Test("a state directory the daemon cannot lock (not saving): History answers from memory without history/, and from history/ too once there is one")
    func stateDirectoryNotLocked() throws {
        // Even root cannot open a directory as its lock file (EISDIR): the daemon runs
        // without the lock, writing nothing, as on a read-only file system.
        try FileManager.default.createDirectory(atPath: stateDirectory + "/stopwatchd.lock", withIntermediateDirectories: true)
        let daemon = try DaemonProcess(socket: directory.socket)
        #expect(daemon.waitForLog(containing: "cannot lock"), "\(daemon.readLog())")
        #expect(try swctl(["start", "tea"]).status == 0)
        #expect(try swctl(["stop", "tea"]).status == 0)
        #expect(try swctl(["start", "open"]).status == 0)
        #expect(try log().map(\.name) == ["tea", "open"])
        #expect(try swctl(["report", "--csv"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: stateDirectory + "/history"))
        // A history/ there (restored from a backup, say): read, though not written.
        try writeHistory("2025-01.jsonl", #"{"name":"jan","start_ms":1735725600000,"end_ms":1735729200000,"elapsed_ms":3600000}"# + "\n")
        #expect(try log().map(\.name) == ["jan", "tea", "open"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: stateDirectory + "/history") == ["2025-01.jsonl"])
    }

    @Test("History over a raw connection: batches of 10,000 with more, TooManyResults without, and the connection goes on")
    func batches() throws {
        let line = #"{"name":"many","start_ms":1767261600000,"end_ms":1767261601000,"elapsed_ms":1000}"# + "\n"
        try writeHistory("2026-01.jsonl", String(repeating: line, count: 10_001))
        let daemon = try DaemonProcess(socket: directory.socket)
        let connection = try RawConnection(daemon.socket)
        try connection.call("io.stopwatchd.History", #"{"name":"many"}"#, more: true)
        var sizes: [Int] = []
        var continues: [Bool] = []
        while let reply = try connection.reply() {
            guard case .array(let intervals)? = (reply["parameters"]).flatMap({ if case .object(let p) = $0 { p["intervals"] } else { nil } }) else {
                Issue.record("not an intervals reply: \(reply)")
                break
            }
            sizes.append(intervals.count)
            let more = reply["continues"] == .bool(true)
            continues.append(more)
            if !more { break }
        }
        #expect(sizes == [10_000, 1])
        #expect(continues == [true, false])
        try connection.call("io.stopwatchd.History", "{}")
        let refused = try #require(try connection.reply())
        #expect(refused["error"] == .string("io.stopwatchd.TooManyResults"))
        // Still served: the refusal does not close the connection.
        try connection.call("io.stopwatchd.History", #"{"since_ms":1767261601000}"#)
        let none = try #require(try connection.reply())
        #expect(none["error"] == nil)
        #expect(none["parameters"] == .object(["intervals": .array([])]))
    }

    @Test("a last line that lost only its newline is kept (a newline is added), not cut")
    func lastLineWithoutNewline() throws {
        let whole = #"{"name":"kept","start_ms":1767261600000,"end_ms":1767265200000,"elapsed_ms":3600000}"#
        try writeHistory("2026-01.jsonl", whole + "\n" + whole)
        let daemon = try DaemonProcess(socket: directory.socket)
        #expect(try log().map(\.name) == ["kept", "kept"])
        let text = try String(contentsOfFile: try deviceFolder() + "/2026-01.jsonl", encoding: .utf8)
        #expect(text == whole + "\n" + whole + "\n")
        _ = daemon
    }

    @Test("calls pipelined behind a History stream wait for its end, with or without more")
    func pipelinedBehindHistory() throws {
        let line = #"{"name":"many","start_ms":1767261600000,"end_ms":1767261601000,"elapsed_ms":1000}"# + "\n"
        try writeHistory("2026-01.jsonl", String(repeating: line, count: 10_001))
        let daemon = try DaemonProcess(socket: directory.socket)
        let connection = try RawConnection(daemon.socket)
        try connection.send(
            #"{"method":"io.stopwatchd.History","parameters":{"name":"many"},"more":true}"# + "\u{0}"
                + #"{"method":"io.stopwatchd.History","parameters":{"name":"nobody"}}"# + "\u{0}"
                + #"{"method":"io.stopwatchd.Get","parameters":{"name":"x"}}"#
        )
        var kinds: [String] = []
        for _ in 0..<4 {
            guard let reply = try connection.reply() else { break }
            if let error = reply["error"] { kinds.append("\(error)"); continue }
            guard case .object(let parameters)? = reply["parameters"] else { kinds.append("?"); continue }
            if case .array(let intervals)? = parameters["intervals"] {
                kinds.append("\(intervals.count)\(reply["continues"] == .bool(true) ? "+" : "")")
            } else if parameters["stopwatch"] != nil {
                kinds.append("stopwatch")
            }
        }
        #expect(kinds == ["10000+", "1", "0", "stopwatch"])
    }
}
