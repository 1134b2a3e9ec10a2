import Foundation
import LinuxSystem
import StopWatchCore
@testable import StopwatchDaemon
import StopwatchProtocol
import StopwatchdClient
import Testing
import Varlink

/// Hooks in the real daemon (SPEC §4, "Events and hooks"): what a hook gets, and how the
/// daemon contains hooks that hang, fork, print megabytes or should not run, serving on.
@Suite("hooks")
struct HookTests {
    let directory: TestDirectory
    var hooks: String { directory.path + "/hooks" }

    init() throws {
        directory = try TestDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/hooks", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    }

    func daemon(_ arguments: [String] = []) throws -> DaemonProcess {
        try DaemonProcess(socket: directory.socket, arguments: ["--hook-dir", hooks] + arguments)
    }

    func hook(_ name: String, _ body: String, mode: Int = 0o755) throws {
        let path = hooks + "/" + name
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    func contents(_ name: String) -> String? { try? String(contentsOfFile: directory.file(name), encoding: .utf8) }

    @Test("swctl start: the hook gets the event in its environment and the Watch reply on standard input")
    func startEvent() throws {
        try hook("record", """
            env | grep '^STOPWATCHD_' | grep -v SOCKET | sort > \(directory.file("env.tmp"))
            cat > \(directory.file("stdin.tmp"))
            mv \(directory.file("env.tmp")) \(directory.file("env")); mv \(directory.file("stdin.tmp")) \(directory.file("stdin"))
            """)
        let daemon = try daemon()
        #expect(try Swctl.run(["start", "x"], socket: daemon.socket).status == 0)
        #expect(Deadline.wait { contents("stdin") != nil })
        let environment = contents("env") ?? ""
        #expect(environment.hasPrefix("STOPWATCHD_ELAPSED_MS="), "\(environment)")
        #expect(environment.contains("STOPWATCHD_EVENT=start\nSTOPWATCHD_NAME=x\nSTOPWATCHD_STATE=counting\n"), "\(environment)")
        #expect(!environment.contains("TARGET") && !environment.contains("LATE"))
        let input = contents("stdin") ?? ""
        let json = try JSONParser.parse(String(input.dropLast()))
        guard case .object(let parameters) = json else { Issue.record("not an object: \(input)"); return }
        let update = try WatchUpdate(json: parameters)
        #expect(update.event == .start)
        #expect(update.stopwatch.name == "x" && update.stopwatch.state == .counting)
    }

    @Test("a hook gets the counting interval's note and the socket its daemon serves, so its swctl reaches it")
    func noteAndSocket() throws {
        try hook("record", """
            [ "$STOPWATCHD_EVENT" = start ] || exit 0
            printf '%s\\n%s\\n' "$STOPWATCHD_NOTE" "$STOPWATCHD_SOCKET" > \(directory.file("env.tmp"))
            mv \(directory.file("env.tmp")) \(directory.file("env"))
            """)
        let daemon = try daemon()
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.call(VarlinkCall(method: "io.stopwatchd.Start", parameters: ["name": .string("x"), "note": .string("the report")]))
        #expect(Deadline.wait { contents("env") != nil })
        #expect(contents("env") == "the report\n\(daemon.socket)\n")
    }

    @Test("a hook of a stop gets the note of the interval it ended")
    func stopGetsEndedNote() throws {
        try hook("record", """
            [ "$STOPWATCHD_EVENT" = stop ] || exit 0
            printf '%s\\n' "$STOPWATCHD_NOTE" > \(directory.file("env.tmp"))
            mv \(directory.file("env.tmp")) \(directory.file("env"))
            """)
        let daemon = try daemon()
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.call(VarlinkCall(method: "io.stopwatchd.Start", parameters: ["name": .string("x"), "note": .string("the report")]))
        #expect(try Swctl.run(["stop", "x"], socket: daemon.socket).status == 0)
        #expect(Deadline.wait { contents("env") != nil })
        #expect(contents("env") == "the report\n")
    }

    @Test("a hook that hangs is stopped after --hook-timeout, and the daemon serves meanwhile")
    func hangs() throws {
        try hook("hang", "trap '' TERM; while :; do sleep 1; done")
        let daemon = try daemon(["--hook-timeout", "500ms"])
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("a")
        #expect(try client.stop("a").state == .pause)
        #expect(daemon.waitForLog(containing: "still runs after 500ms: SIGTERM to its process group"))
        #expect(daemon.waitForLog(containing: "SIGKILL to its process group"))
        #expect(daemon.waitForLog(containing: "(timeout 500ms): killed by signal 9"))
        #expect(try client.get("a").state == .pause)
    }

    @Test("a hook that forks and exits: its run ends, what it left is killed, the daemon serves on")
    func forksAndExits() throws {
        try hook("fork", "sleep 300 & echo $! > \(directory.file("child.tmp")); mv \(directory.file("child.tmp")) \(directory.file("child")); echo forked")
        let daemon = try daemon(["--max-hooks-running", "1"])
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("f")
        _ = try client.stop("f")
        // Two runs one after the other through one slot: the first ended although its child held the pipe.
        #expect(daemon.waitForLog(containing: "hook fork (stop of 'f'): forked"))
        let child = pid_t(contents("child")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        #expect(child > 0)
        #expect(Deadline.wait {
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8) else { return true }
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        })
        #expect(try client.get("f").state == .pause)
    }

    /// Whether process `pid` exists and has not ended (a zombie has).
    static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        return stat.split(separator: ")").last?.split(separator: " ").first != "Z"
    }

    @Test("a hook that sends its output elsewhere, then starts jobs in the background: all 5 outlive its run, which ends")
    func leavesJobsRunning() throws {
        // Each job waits until the test has seen the run end (30 s at most: a test that failed
        // before never says go), then says it lives on. The hook's process group, which the
        // jobs stay in (the hook leads it: its pid), is recorded for the test to kill.
        try hook("detach", """
            [ "$STOPWATCHD_EVENT" = start ] || exit 0
            echo starting jobs
            echo $$ > \(directory.file("group"))
            exec >/dev/null 2>&1
            for i in 1 2 3 4 5; do
                (
                    for n in $(seq 600); do [ -e \(directory.file("go")) ] && break; sleep 0.05; done
                    [ -e \(directory.file("go")) ] || exit 0
                    echo > \(directory.file("alive-"))$i; exec sleep 300
                ) &
                echo $! >> \(directory.file("jobs.tmp"))
            done
            mv \(directory.file("jobs.tmp")) \(directory.file("jobs"))
            """)
        let daemon = try daemon(["--log-level", "debug", "--max-hooks-running", "1"])
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("d")
        // Logged once it is reaped: what was killed of its group was killed before.
        #expect(daemon.waitForLog(containing: "hook detach (start of 'd') succeeded"), "\(daemon.readLog())")
        let jobs = (contents("jobs") ?? "").split(separator: "\n").compactMap { pid_t($0) }
        // By group, not by pid: a job's pid may be another process's once it ended, but the
        // group's id is not given to any other while a member lives.
        let group = pid_t(contents("group")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        defer { if group > 1 { kill(-group, SIGKILL) } }
        #expect(jobs.count == 5)
        #expect(group > 1 && jobs.allSatisfy { getpgid($0) == group }, "group \(group), jobs' \(jobs.map { getpgid($0) })")
        #expect(FileManager.default.createFile(atPath: directory.file("go"), contents: nil))
        #expect(Deadline.wait { (1...5).allSatisfy { contents("alive-\($0)") != nil } }, "\((1...5).filter { contents("alive-\($0)") != nil })")
        #expect(jobs.allSatisfy(Self.isAlive))
        #expect(daemon.readLog().contains("hook detach (start of 'd'): starting jobs"))
        // And the slot is free: the next run comes.
        _ = try client.stop("d")
        #expect(daemon.waitForLog(containing: "hook detach (stop of 'd') succeeded"))
    }

    @Test("a hook stopped for its timeout: what it left in its group is killed, its output elsewhere or not")
    func timedOutLeavesNothing() throws {
        try hook("late", """
            exec >/dev/null 2>&1
            sh -c 'trap "" TERM; exec sleep 300' &
            echo $! > \(directory.file("job.tmp")); mv \(directory.file("job.tmp")) \(directory.file("job"))
            exec sleep 300
            """)
        // Long enough for the hook to fork, write and rename its job's pid before its SIGTERM,
        // on a loaded machine and under a sanitizer.
        let daemon = try daemon(["--hook-timeout", Binaries.sanitized ? "6s" : "2s"])
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("t")
        #expect(daemon.waitForLog(containing: "hook late (start of 't') was stopped after"), "\(daemon.readLog())")
        let job = pid_t(contents("job")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        // Only while it lives: once it has ended its pid may be another process's.
        defer { if job > 0, Self.isAlive(job) { kill(job, SIGKILL) } }
        #expect(job > 0)
        // It ignored the SIGTERM; the SIGKILL to the group after the hook's end reached it.
        #expect(Deadline.wait { !Self.isAlive(job) })
    }

    @Test("a hook that prints megabytes: a few lines logged, the rest counted, memory bounded")
    func printsMegabytes() throws {
        try hook("loud", "head -c 50000000 /dev/zero | tr '\\\\0' 'y' | fold -w 80")
        let daemon = try daemon()
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("m")
        let before = DaemonMemory.residentKiB(of: daemon.pid) ?? 0
        for _ in 0..<3 { _ = try client.lap("m") }
        #expect(Deadline.wait(.seconds(60)) { daemon.readLog().components(separatedBy: "more bytes of output not logged").count == 5 })
        #expect(try client.get("m").lapsMs.count == 3)
        let after = DaemonMemory.residentKiB(of: daemon.pid) ?? 0
        // Not under a sanitizer: AddressSanitizer's quarantine keeps freed buffers resident,
        // so its resident size follows the 50 MB read, not what is kept (32.5 MiB once, with
        // no leak; LeakSanitizer looks for leaks there). The plain run holds the bound.
        if !Binaries.sanitized {
            #expect(after - before < 32 * 1024, "resident \(before) KiB, then \(after) KiB")
        }
        let lines = daemon.readLog().split(separator: "\n").filter { $0.contains("hook loud") }
        #expect(lines.count <= 4 * 34, "\(lines.count) lines")
    }

    @Test("not executable, writable by its group: skipped and logged, once")
    func skipped() throws {
        try hook("plain", "touch \(directory.file("ran-plain"))", mode: 0o644)
        try hook("writable", "touch \(directory.file("ran-writable"))", mode: 0o775)
        try hook("good", "echo $STOPWATCHD_EVENT >> \(directory.file("good"))")
        let daemon = try daemon()
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("s")
        _ = try client.stop("s")
        #expect(Deadline.wait { contents("good").map { $0.split(separator: "\n").sorted() } == ["start", "stop"] })
        let log = daemon.readLog()
        #expect(log.components(separatedBy: "skipping hook \(hooks)/plain: not executable").count == 2, "\(log)")
        #expect(log.components(separatedBy: "warning: skipping hook \(hooks)/writable: writable by its group or others").count == 2, "\(log)")
        #expect(contents("ran-plain") == nil && contents("ran-writable") == nil)
    }

    @Test("a hook added while the daemon runs is run at the next event")
    func addedWhileRunning() throws {
        let daemon = try daemon()
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("n")
        // Appended: the start's runs may read the directory after the hook is there (they are
        // started later, from the outbox), and then run it too, maybe beside the lap's.
        try hook("new", "echo $STOPWATCHD_EVENT >> \(directory.file("new"))")
        _ = try client.lap("n")
        #expect(Deadline.wait { (contents("new") ?? "").split(separator: "\n").contains("lap") })
        #expect(Set((contents("new") ?? "").split(separator: "\n")).isSubset(of: ["start", "lap"]), "\(contents("new") ?? "")")
    }

    @Test("a hook directory others may write is refused at start, saying how to fix it")
    func untrustedDirectory() throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: hooks)
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--hook-dir", hooks], waitUntilReady: false)
        let status = daemon.waitForExit()
        #expect(status != nil && status != 0)
        #expect(daemon.readLog().contains("refusing the hook directory: \(hooks) is writable by others; remove that (chmod o-w \(hooks))"))
        #expect(!FileManager.default.fileExists(atPath: directory.socket))
    }

    /// The processes that hold the hook at `path` open as descriptor 3: a run of it (the
    /// daemon runs a hook as `/proc/self/fd/3`, the file opened there) and the children it
    /// left that descriptor to. An ended run (a zombie) holds no descriptor.
    static func processes(running path: String) -> [pid_t] {
        guard let resolved = realpath(path, nil) else { return [] }
        defer { free(resolved) }
        let file = String(cString: resolved)
        return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard let pid = pid_t(entry), let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/fd/3") else { return nil }
            return link == file ? pid : nil
        }
    }

    /// The lines a hook wrote with `echo "$STOPWATCHD_NAME ${STOPWATCHD_LATE_MS:-none}"`.
    func runs() -> [(name: String, late: Int?)] {
        (contents("runs") ?? "").split(separator: "\n").map { line in
            let words = line.split(separator: " ")
            return (String(words.first ?? ""), words.count > 1 ? Int(words[1]) : nil)
        }
    }

    @Test("a stop or a kill -9 while runs wait: each waiting run happens after the restart, late (STOPWATCHD_LATE_MS > 0)", arguments: [SIGTERM, SIGKILL])
    func waitingRunsSurviveAStop(signal: Int32) throws {
        try FileManager.default.createDirectory(atPath: directory.file("running"), withIntermediateDirectories: false)
        try hook("slow", """
            touch \(directory.file("running"))/$$
            echo "$STOPWATCHD_NAME ${STOPWATCHD_LATE_MS:-none}" >> \(directory.file("runs"))
            sleep 0.3
            rm \(directory.file("running"))/$$
            """)
        var daemon = try daemon(["--max-hooks-running", "1"])
        let names = (0..<12).map { "n\($0)" }
        let client = StopwatchClient(socketPath: daemon.socket)
        for name in names { _ = try client.start(name) }
        // A run is seen as a process (the wait for none below could not pass by not seeing one).
        #expect(Deadline.wait { !Self.processes(running: hooks + "/slow").isEmpty })
        #expect(daemon.stop(signal) == (signal == SIGTERM ? 0 : 128 + SIGKILL))
        // A run under way is the hook's own: it ends by itself. Waited for by its processes,
        // not by its `running` file alone: a run spawned just before the stop may not have
        // made its file yet, and would write its line (on time, not late) after `before` is read.
        #expect(Deadline.wait {
            Self.processes(running: hooks + "/slow").isEmpty
                && (try? FileManager.default.contentsOfDirectory(atPath: directory.file("running")))?.isEmpty == true
        })
        let before = runs()
        #expect(before.count < names.count, "runs were left waiting: \(before)")
        if signal == SIGTERM {
            #expect(daemon.readLog().contains("wait: kept in outbox.jsonl, to run, late, when stopwatchd starts again"), "\(daemon.readLog())")
        }
        daemon = try self.daemon(["--max-hooks-running", "4"])
        #expect(Deadline.wait(.seconds(30)) { Set(runs().map(\.name)) == Set(names) }, "\(runs())")
        let after = runs().dropFirst(before.count)
        #expect(!after.isEmpty && after.allSatisfy { ($0.late ?? 0) > 0 }, "\(after)")
        // A run started just before a kill -9, its start not yet marked, may run again: at worst twice.
        let counts = Dictionary(grouping: runs(), by: \.name).mapValues(\.count)
        #expect(counts.values.allSatisfy { $0 <= 2 }, "\(counts)")
        #expect(daemon.readLog().contains("left waiting by the last stopwatchd: run now, late"))
    }
}

/// A storm of expiries through a hook far slower than the storm: 10,000 processes, so it
/// runs on its own in CI (`.ci/run`), not beside the load suites, whose timing it would
/// starve on 2 cores.
@Suite("hook storm")
struct HookStormTests {
    @Test("10,000 countdowns expiring at one instant, a slow hook: every expiry reaches it, once, and the daemon serves on")
    func expiryStormReachesTheHook() throws {
        let directory = try TestDirectory()
        let hooks = directory.path + "/hooks"
        try FileManager.default.createDirectory(atPath: hooks, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try """
            #!/bin/sh
            [ "$STOPWATCHD_EVENT" = expired ] || exit 0
            echo "$STOPWATCHD_NAME" >> \(directory.file("names"))

            """.write(toFile: hooks + "/record", atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hooks + "/record")
        // Scaled down under a sanitizer, whose daemon is many times slower.
        let count = Binaries.sanitized ? 1_000 : 10_000
        // All due as the daemon starts: told in batches of 256, far faster than the hook runs.
        try CountdownFiles.write(count, endingAfter: .milliseconds(500), forDaemonOn: directory.socket)
        // Not waited for with a List: the storm begins as it starts.
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--hook-dir", hooks, "--hook-timeout", "10s"], waitUntilReady: false)
        let client = StopwatchClient(socketPath: daemon.socket, timeout: .seconds(60))
        func names() -> [Substring] {
            ((try? String(contentsOfFile: directory.file("names"), encoding: .utf8)) ?? "").split(separator: "\n")
        }
        #expect(Deadline.wait(.seconds(240)) { names().count >= count }, "\(names().count) of \(count)")
        let counts = Dictionary(grouping: names(), by: { $0 }).mapValues(\.count)
        #expect(counts.count == count, "every expiry reached the hook: \(counts.count) of \(count)")
        let twice = counts.values.count { $0 > 1 }
        #expect(twice == 0, "none twice without a restart: \(twice)")
        #expect(!daemon.readLog().contains("dropp"), "\(daemon.readLog().suffix(2000))")
        #expect(try client.list().count == count)
    }
}
