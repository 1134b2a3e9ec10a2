import Foundation
import LinuxSystem
import StopwatchProtocol
import Testing
@testable import StopwatchDaemon

/// The runner with real hooks (shell scripts) and events handed to it directly, as the
/// service does: what a hook gets, and how the runner contains hooks that misbehave. Real
/// processes, so each wait is on a condition with a deadline, never a sleep.
@Suite("hook runner", .serialized)
final class HookRunnerTests {
    let root: String
    let hooks: String
    let lines = Locked<[String]>([])

    init() throws {
        var template = Array("/tmp/swh-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
        hooks = root + "/hooks"
        try FileManager.default.createDirectory(atPath: hooks, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// A runner whose outbox is in memory, holding up to `backlog` runs waiting.
    func runner(timeout: Duration = .seconds(30), grace: Duration = .seconds(2), running: Int = 4, backlog: Int = 256) -> HookRunner {
        let lines = self.lines
        let logger = Logger(minimumLevel: .debug, journald: false) { line in lines.withLock { $0.append(line) } }
        var limits = HookRunner.Limits()
        limits.timeout = timeout
        limits.grace = grace
        limits.maximumRunning = running
        let directory = HookDirectory(path: hooks, trust: .currentProcess, logger: logger)
        let outbox = EventOutbox(directory: nil, backlog: backlog, lineLimit: 1 << 20, logger: logger)
        return HookRunner(directory: directory, limits: limits, logger: logger, environment: ["PATH=/usr/bin:/bin", "KEPT=yes"], outbox: outbox)
    }

    /// Writes a hook: `#!/bin/sh` and `body`, with `mode`.
    func hook(_ name: String, _ body: String, mode: Int = 0o755) throws {
        let path = hooks + "/" + name
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    func log() -> String { lines.withLock { $0.joined() } }

    func wait(_ timeout: Duration = .seconds(20), until condition: () -> Bool) -> Bool {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    func contents(_ name: String) -> String? { try? String(contentsOfFile: root + "/" + name, encoding: .utf8) }

    static func event(_ kind: WatchEvent, _ name: String = "tea", target: Int64? = nil, late: Duration = .zero) -> StopwatchEvent {
        StopwatchEvent(update: WatchUpdate(stopwatch: Stopwatch(name: name, state: .counting, elapsedMs: 1500, targetMs: target), event: kind), late: late)
    }

    @Test("a hook gets the event in its environment and the Watch reply on its standard input")
    func environmentAndInput() throws {
        try hook("record", """
            env | grep -E '^(STOPWATCHD_|KEPT=)' | sort > \(root)/env.tmp
            cat > \(root)/stdin.tmp
            echo "argv0=$0 pgid=$(ps -o pgid= $$ | tr -d ' ') pid=$$" > \(root)/ids.tmp
            mv \(root)/env.tmp \(root)/env; mv \(root)/stdin.tmp \(root)/stdin; mv \(root)/ids.tmp \(root)/ids
            """)
        let runner = runner()
        runner.run(Self.event(.expired, "tea", target: 1000, late: .milliseconds(500)))
        #expect(wait { contents("stdin") != nil && runner.isIdle })
        #expect(contents("env") == """
            KEPT=yes
            STOPWATCHD_ELAPSED_MS=1500
            STOPWATCHD_EVENT=expired
            STOPWATCHD_LATE_MS=500
            STOPWATCHD_NAME=tea
            STOPWATCHD_STATE=counting
            STOPWATCHD_TARGET_MS=1000

            """)
        #expect(contents("stdin") == #"{"stopwatch":{"name":"tea","state":"counting","elapsed_ms":1500,"laps_ms":[],"target_ms":1000},"event":"expired"}"# + "\n"
            || contents("stdin")?.contains(#""event":"expired""#) == true)
        // Its own process group, run through the descriptor that was checked.
        let ids = (contents("ids") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let pid = ids.split(separator: " ").last.map { $0.dropFirst(4) } ?? ""
        #expect(ids.contains("pgid=\(pid) "), "\(ids)")
        #expect(ids.hasPrefix("argv0=/proc/self/fd/3"), "\(ids)")
    }

    @Test("whenIdle: told once the last run has ended, not while a hook runs (exit on idle waits for it)")
    func toldWhenIdle() throws {
        try hook("hold", "touch \(root)/started; while [ ! -e \(root)/go ]; do sleep 0.02; done")
        let runner = runner()
        let told = Locked(0)
        runner.whenIdle { told.withLock { $0 += 1 } }
        runner.run(Self.event(.start))
        #expect(!runner.isIdle)
        #expect(wait { contents("started") != nil })
        #expect(!runner.isIdle)
        #expect(told.withLock { $0 } == 0)
        #expect(FileManager.default.createFile(atPath: root + "/go", contents: nil))
        #expect(wait { told.withLock { $0 } >= 1 })
        #expect(runner.isIdle)
    }

    @Test("hooks run in name order, and one added meanwhile runs at the next event")
    func addedLater() throws {
        let runner = runner(running: 1)
        runner.run(Self.event(.start))
        #expect(wait { runner.isIdle })
        try hook("b", "echo b >> \(root)/order")
        try hook("a", "echo a >> \(root)/order")
        runner.run(Self.event(.stop))
        #expect(wait { contents("order") == "a\nb\n" && runner.isIdle })
    }

    @Test("one that hangs is stopped: SIGTERM at the timeout, SIGKILL after the grace")
    func hangs() throws {
        try hook("hang", "trap '' TERM; echo $$ > \(root)/pid; while :; do sleep 1; done")
        // A second to reach its `trap`: a SIGTERM before it would end it, and no SIGKILL follow.
        let runner = runner(timeout: .seconds(1), grace: .milliseconds(300))
        runner.run(Self.event(.start))
        #expect(wait { runner.isIdle && self.log().contains("was stopped") })
        let log = log()
        #expect(log.contains("hook hang (start of 'tea') still runs after 1s: SIGTERM"), "\(log)")
        #expect(log.contains("SIGKILL to its process group"), "\(log)")
        #expect(log.contains("killed by signal 9"), "\(log)")
    }

    @Test("one that forks and exits: the run ends with it, and what it left is killed")
    func forksAndExits() throws {
        try hook("fork", "sleep 60 & echo $! > \(root)/child.tmp; mv \(root)/child.tmp \(root)/child; echo forked")
        let runner = runner()
        runner.run(Self.event(.start))
        #expect(wait(.seconds(10)) { runner.isIdle })
        #expect(log().contains("hook fork (start of 'tea'): forked"))
        let child = pid_t(contents("child")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        #expect(child > 0)
        // Gone, or a zombie left to whoever reaps orphans here.
        #expect(wait {
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8) else { return true }
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        })
    }

    @Test("one that prints megabytes: read to the end, a few lines logged, the rest counted")
    func printsMegabytes() throws {
        try hook("loud", "head -c 20000000 /dev/zero | tr '\\\\0' 'x' | fold -w 100; echo done >&2; exit 3")
        let runner = runner()
        runner.run(Self.event(.lap))
        #expect(wait(.seconds(60)) { runner.isIdle })
        let log = log()
        let lines = log.split(separator: "\n").filter { $0.contains("hook loud") }
        #expect(lines.count < 40, "\(lines.count) lines")
        #expect(log.contains("more bytes of output not logged"), "\(log)")
        #expect(log.contains("hook loud (lap of 'tea') failed: exited with status 3"), "\(log)")
    }

    @Test("not executable, writable by others, not a regular file: skipped, logged once for all events")
    func skipped() throws {
        try hook("plain", "exit 0", mode: 0o644)
        try hook("writable", "touch \(root)/ran-writable", mode: 0o775)
        try FileManager.default.createDirectory(atPath: hooks + "/subdir", withIntermediateDirectories: false)
        try hook("good", "echo $STOPWATCHD_EVENT >> \(root)/good")
        let runner = runner()
        runner.run(Self.event(.start))
        runner.run(Self.event(.stop))
        #expect(wait { contents("good").map { $0.split(separator: "\n").sorted() } == ["start", "stop"] && runner.isIdle })
        let log = log()
        #expect(log.components(separatedBy: "skipping hook \(hooks)/plain: not executable").count == 2, "\(log)")
        #expect(log.components(separatedBy: "skipping hook \(hooks)/writable: writable by its group or others").count == 2, "\(log)")
        #expect(log.contains("stopwatchd: warning: skipping hook \(hooks)/writable"))
        #expect(log.contains("skipping hook \(hooks)/subdir: not a regular file"))
        #expect(contents("ran-writable") == nil)
    }

    @Test("a symbolic link to a hook runs it; to a writable file, it does not")
    func links() throws {
        let shipped = root + "/notify"
        try ("#!/bin/sh\necho linked >> \(root)/linked\n").write(toFile: shipped, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: shipped)
        try FileManager.default.createSymbolicLink(atPath: hooks + "/notify", withDestinationPath: shipped)
        let runner = runner()
        runner.run(Self.event(.expired))
        #expect(wait { contents("linked") == "linked\n" && runner.isIdle })
        try FileManager.default.setAttributes([.posixPermissions: 0o757], ofItemAtPath: shipped)
        runner.run(Self.event(.expired))
        #expect(wait { self.log().contains("skipping hook \(hooks)/notify: writable") })
        #expect(wait { runner.isIdle })
        #expect(contents("linked") == "linked\n")
    }

    @Test("a burst beyond the backlog: at most the pool runs at once, the oldest waiting are dropped, told in two lines")
    func burst() throws {
        try FileManager.default.createDirectory(atPath: root + "/running", withIntermediateDirectories: false)
        try hook("count", """
            touch \(root)/running/$$
            ls \(root)/running | wc -l >> \(root)/seen
            sleep 0.05
            rm \(root)/running/$$
            """)
        let runner = runner(running: 4, backlog: 16)
        for index in 0..<2000 { runner.run(Self.event(.expired, "t\(index)")) }
        #expect(wait(.seconds(60)) { runner.isIdle })
        let seen = (contents("seen") ?? "").split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        #expect(!seen.isEmpty)
        #expect(seen.allSatisfy { $0 <= 4 }, "\(seen)")
        // The newest events the backlog kept (16), the runs that waited and ran: a few dozen.
        #expect(seen.count <= 2000 && seen.count >= 16, "\(seen.count) runs")
        let log = log()
        #expect(log.contains("more than 16 runs wait (--hook-backlog); dropping the oldest"))
        #expect(log.contains("dropped: more than 16 were waiting (--hook-backlog)"))
        let dropLines = log.split(separator: "\n").filter { $0.contains("dropp") }
        #expect(dropLines.count <= 10, "\(dropLines)")
    }

    @Test("no directory: nothing runs; made later, it is used")
    func directoryMadeLater() throws {
        try FileManager.default.removeItem(atPath: hooks)
        let runner = runner()
        runner.run(Self.event(.start))
        #expect(wait { runner.isIdle })
        try FileManager.default.createDirectory(atPath: hooks, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try hook("late", "touch \(root)/late")
        runner.run(Self.event(.start))
        #expect(wait { contents("late") != nil })
        // Writable by others: refused, logged, nothing runs.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: hooks)
        try FileManager.default.removeItem(atPath: root + "/late")
        runner.run(Self.event(.start))
        #expect(wait { self.log().contains("running no hooks: \(hooks) is writable by others") })
        #expect(wait { runner.isIdle })
        #expect(contents("late") == nil)
    }
}
