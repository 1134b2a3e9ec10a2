import Foundation
import LinuxSystem
import StopwatchProtocol
import StopwatchdClient
import Testing
import Varlink

/// `swctl bridge`, and `swctl --host` through it, without a real sshd: `$STOPWATCHD_SSH`
/// names a fake ssh, a script in the test's directory that drops ssh's options and host and
/// runs `swctl --socket SOCK bridge` (and counts its runs), or fails as ssh does.
///
/// The scripts are run by `/bin/sh` (`STOPWATCHD_SSH="/bin/sh SCRIPT"`), never executed
/// themselves: a test in parallel that forks while one is being written holds it open for
/// writing until its exec, and executing it then fails with ETXTBSY.
@Suite("reach: swctl bridge and --host")
struct BridgeTests {
    /// A fake ssh for `directory`'s daemon: each run appends a line to `runs`, then becomes
    /// `swctl bridge` on the daemon's socket.
    static func fakeSSH(in directory: TestDirectory) throws -> String {
        let path = directory.file("fake-ssh")
        let script = """
            #!/bin/sh
            # Drops ssh's options (-T -o BatchMode=yes) and the host, as a real ssh would not.
            echo run >> '\(directory.file("runs"))'
            exec '\(Binaries.swctl)' --socket '\(directory.socket)' bridge

            """
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        return "/bin/sh " + path
    }

    /// A fake ssh that cannot connect, with ssh's own words and status.
    static func failingSSH(in directory: TestDirectory) throws -> String {
        let path = directory.file("failing-ssh")
        let script = """
            #!/bin/sh
            echo "debug chatter that is not the last line" >&2
            echo "ssh: connect to host nowhere port 22: Connection refused" >&2
            exit 255

            """
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        return "/bin/sh " + path
    }

    static func runs(in directory: TestDirectory) -> Int {
        ((try? String(contentsOfFile: directory.file("runs"), encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    func remote(_ arguments: [String], ssh: String) throws -> Swctl {
        try Swctl.run(["--host", "desk"] + arguments, socket: nil, environment: ["STOPWATCHD_SSH": ssh])
    }

    @Test("start, lap, stop, status, list, timer, log through --host act on the daemon behind the bridge")
    func commands() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let ssh = try Self.fakeSSH(in: directory)
        let local = StopwatchClient(socketPath: daemon.socket)

        let start = try remote(["start", "tea"], ssh: ssh)
        #expect(start.status == 0, "\(start.error)")
        #expect(start.output.hasPrefix("tea counting"), "\(start.output)")
        #expect(try local.get("tea").state == .counting)
        #expect(try remote(["lap", "tea"], ssh: ssh).status == 0)
        #expect(try local.get("tea").lapsMs.count == 1)
        #expect(try remote(["stop", "tea"], ssh: ssh).status == 0)
        #expect(try local.get("tea").state == .pause)
        let status = try remote(["--json", "status", "tea"], ssh: ssh)
        #expect(status.status == 0)
        #expect(status.output.contains(#""state":"pause""#), "\(status.output)")
        let timer = try remote(["timer", "egg", "4m"], ssh: ssh)
        #expect(timer.status == 0, "\(timer.error)")
        #expect(try local.get("egg").targetMs == 240_000)
        let list = try remote(["list"], ssh: ssh)
        #expect(list.lines.contains { $0.hasPrefix("tea ") } && list.lines.contains { $0.hasPrefix("egg ") }, "\(list.output)")
        let log = try remote(["log", "tea", "--csv"], ssh: ssh)
        #expect(log.status == 0, "\(log.error)")
        #expect(log.lines.first == "name,start,end,elapsed_ms,id,note" && log.lines.count == 2, "\(log.output)")
        // The daemon's refusal comes through the bridge with its meaning: exit 1, not 69.
        let refused = try remote(["lap", "tea"], ssh: ssh)
        #expect(refused.status == 1 && refused.error.contains("not counting"), "\(refused.error)")
        #expect(Self.runs(in: directory) == 8)
    }

    @Test("$STOPWATCHD_HOST goes through ssh too; an explicit --socket beats it")
    func hostVariable() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let ssh = try Self.fakeSSH(in: directory)
        let viaVariable = try Swctl.run(["start", "v"], socket: nil, environment: ["STOPWATCHD_SSH": ssh, "STOPWATCHD_HOST": "desk"])
        #expect(viaVariable.status == 0, "\(viaVariable.error)")
        #expect(Self.runs(in: directory) == 1)
        let direct = try Swctl.run(["status", "v"], socket: daemon.socket, environment: ["STOPWATCHD_SSH": ssh, "STOPWATCHD_HOST": "desk"])
        #expect(direct.status == 0 && direct.output.hasPrefix("v counting"), "\(direct.output)")
        #expect(Self.runs(in: directory) == 1)
    }

    @Test("wait through --host ends when the countdown expires")
    func wait() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let ssh = try Self.fakeSSH(in: directory)
        let timer = try remote(["timer", "egg", "300ms"], ssh: ssh)
        #expect(timer.status == 0, "\(timer.error)")
        let wait = try remote(["wait", "egg", "--timeout", "20s"], ssh: ssh)
        #expect(wait.status == 0, "\(wait.error)")
        // Counting, it is not done: the wait times out.
        #expect(try remote(["start", "other"], ssh: ssh).status == 0)
        let timedOut = try remote(["wait", "other", "--timeout", "200ms"], ssh: ssh)
        #expect(timedOut.status == 124, "\(timedOut.error)")
        #expect(daemon.isRunning)
    }

    @Test("watch through --host sees ticks, and reconnects through a new ssh after the daemon restarts")
    func watchReconnects() throws {
        let directory = try TestDirectory()
        var daemon: DaemonProcess? = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "50ms"])
        let ssh = try Self.fakeSSH(in: directory)
        _ = try StopwatchClient(socketPath: directory.socket).start("w")
        let child = try ChildProcess(
            Binaries.swctl, ["--host", "desk", "watch", "w", "--format", "{state} {elapsed_ms}"],
            environment: Binaries.childEnvironment.merging(["STOPWATCHD_SSH": ssh]) { $1 }, captureOutput: true
        )
        let lines = LineReader(try #require(child.output))
        let first = try #require(lines.next(where: { $0.hasPrefix("counting ") }))
        let firstMs = try #require(Int(first.dropFirst("counting ".count)))
        #expect(lines.next(where: { ($0.hasPrefix("counting ") ? Int($0.dropFirst("counting ".count)) : nil).map { $0 > firstMs } ?? false }) != nil,
                "no tick after \(first)")

        #expect(daemon?.stop(SIGTERM) == 0)
        daemon = nil
        #expect(lines.next(where: { $0.contains("unavailable") }) != nil)
        let runsBefore = Self.runs(in: directory)
        daemon = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "50ms"])
        _ = try StopwatchClient(socketPath: directory.socket).stop("w")
        #expect(lines.next(where: { $0.hasPrefix("pause ") }) != nil)
        #expect(Self.runs(in: directory) > runsBefore)
        #expect(child.isRunning)
    }

    @Test("an ssh that fails is exit 69 with ssh's last line, at once")
    func sshFails() throws {
        let directory = try TestDirectory()
        let ssh = try Self.failingSSH(in: directory)
        for command in [["status"], ["wait", "egg"], ["list"]] {
            let began = ContinuousClock.now
            let result = try Swctl.run(["--host", "nowhere"] + command, socket: nil, environment: ["STOPWATCHD_SSH": ssh])
            #expect(ContinuousClock.now - began < .seconds(5))
            #expect(result.status == 69, "\(command): \(result.error)")
            #expect(result.error.hasPrefix("swctl: cannot reach stopwatchd through '\(ssh) -T -o BatchMode=yes -o ServerAliveInterval=10 -o ServerAliveCountMax=3 -- nowhere swctl bridge': ssh: connect to host nowhere port 22: Connection refused;"),
                    "\(result.error)")
            #expect(result.error.split(separator: "\n").count == 1, "\(result.error)")
        }
        let missing = try Swctl.run(["--host", "nowhere", "status"], socket: nil, environment: ["STOPWATCHD_SSH": "/nonexistent/ssh"])
        #expect(missing.status == 69 && missing.error.contains("cannot start"), "\(missing.error)")
    }

    @Test("swctl bridge relays raw varlink: two calls pipelined, replies in order, and after end of input the replies still come and it exits 0")
    func rawBridge() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let calls = directory.file("calls")
        let messages = #"{"method":"io.stopwatchd.Start","parameters":{"name":"one"}}"# + "\0"
            + #"{"method":"io.stopwatchd.Lap","parameters":{"name":"one"}}"# + "\0"
        try messages.write(toFile: calls, atomically: true, encoding: .utf8)
        // Standard input is a file: its end comes at once, right behind the two calls.
        let result = try ChildProcess.run(
            "/bin/sh", ["-c", #"exec "$0" --socket "$1" bridge < "$2""#, Binaries.swctl, daemon.socket, calls],
            environment: Binaries.childEnvironment, timeout: .seconds(20)
        )
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.hasSuffix("\0"))
        let replies = try result.output.split(separator: "\0").map { text -> JSONObject in
            guard case .object(let object) = try JSONParser.parse(String(text)) else { throw MalformedMessage("not an object") }
            return object
        }
        #expect(replies.count == 2, "\(result.output)")
        #expect(replies.first?.stopwatch?.lapsMs.isEmpty == true)
        #expect(replies.last?.stopwatch?.lapsMs.count == 1)
    }

    @Test("swctl bridge with no daemon is exit 69, saying so")
    func bridgeWithoutDaemon() throws {
        let directory = try TestDirectory()
        let result = try Swctl.run(["bridge"], socket: directory.socket)
        #expect(result.status == 69)
        #expect(result.error.hasPrefix("swctl: no stopwatchd at \(directory.socket)"), "\(result.error)")
    }

    @Test("the Python varlink CLI calls through --bridge \"swctl bridge\"",
          .enabled(if: InteropTests.enabled, "the Python varlink package is not installed (python3 -m pip install varlink, in a venv)"))
    func pythonBridge() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        _ = try StopwatchClient(socketPath: daemon.socket).start("py")
        let result = try ChildProcess.run(
            "/usr/bin/env",
            ["python3", "-m", "varlink.cli", "--bridge", "\(Binaries.swctl) --socket \(daemon.socket) bridge", "call", "io.stopwatchd.Get", #"{"name":"py"}"#],
            environment: ProcessInfo.processInfo.environment, timeout: .seconds(30)
        )
        #expect(result.status == 0, "\(result.output) \(result.error)")
        #expect(result.output.contains(#""name": "py""#) && result.output.contains(#""state": "counting""#), "\(result.output) \(result.error)")
    }

    @Test("StopwatchClient over a bridge command: calls and a watch, and its children are reaped")
    func swiftClient() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        // A bridge that tells its pid, so the test can see it is gone, not a zombie.
        let bridge = directory.file("bridge")
        try """
            #!/bin/sh
            echo $$ >> '\(directory.file("pids"))'
            exec '\(Binaries.swctl)' --socket '\(daemon.socket)' bridge

            """.write(toFile: bridge, atomically: true, encoding: .utf8)
        let client = StopwatchClient(endpoint: .bridge(["/bin/sh", bridge]))
        #expect(try client.start("sw").state == .counting)
        #expect(try client.list().map(\.name) == ["sw"])
        let watch = try client.openWatch("sw")
        #expect(try watch.nextUpdate().event == .current)
        watch.close()
        #expect(throws: ClientError.self) { try client.reset("sw") }
        let pids = ((try? String(contentsOfFile: directory.file("pids"), encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
        #expect(pids.count == 4)
        for pid in pids {
            // Reaped: no /proc entry (a zombie keeps one until its parent waits for it).
            #expect(!FileManager.default.fileExists(atPath: "/proc/\(pid)"), "bridge \(pid) was not reaped")
        }
        // A command that is not there fails as a bridge, not as a socket.
        let missing = StopwatchClient(endpoint: .bridge([directory.file("none")]))
        #expect(throws: ClientError.self) { try missing.get() }
        do {
            _ = try missing.get()
        } catch {
            guard case .bridgeFailed = error else { Issue.record("\(error)"); return }
            #expect(error.exitStatus == 69)
        }
    }

    @Test("a bridge command that ignores SIGTERM and lingers is killed after a grace: swctl --host never hangs in close")
    func wrapperIgnoringTerm() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        // The relay ends with its input, then the wrapper lingers, deaf to SIGTERM (an
        // ignored signal stays ignored across exec).
        let path = directory.file("stubborn-ssh")
        try """
            #!/bin/sh
            trap '' TERM
            '\(Binaries.swctl)' --socket '\(daemon.socket)' bridge
            exec sleep 30

            """.write(toFile: path, atomically: true, encoding: .utf8)
        let began = ContinuousClock.now
        let result = try remote(["list"], ssh: "/bin/sh " + path)
        #expect(result.status == 0, "\(result.error)")
        #expect(ContinuousClock.now - began < .seconds(10), "close waited for the wrapper")
    }

    @Test("interrupting a watch wakes its receive even when a grandchild of the bridge command holds the output open")
    func interruptWithGrandchild() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        // No exec: the shell is the child, the relay its child; SIGTERM ends the shell only.
        let bridge = directory.file("bridge")
        try """
            #!/bin/sh
            '\(Binaries.swctl)' --socket '\(daemon.socket)' bridge

            """.write(toFile: bridge, atomically: true, encoding: .utf8)
        let client = StopwatchClient(endpoint: .bridge(["/bin/sh", bridge]))
        let watch = try client.openWatch("quiet")
        #expect(try watch.nextUpdate().event == .current)
        let ended = Locked(false)
        Thread.detachNewThread {
            while (try? watch.nextUpdate()) != nil {}
            ended.withLock { $0 = true }
        }
        usleep(200_000)
        watch.interrupt()
        #expect(Deadline.wait(.seconds(5)) { ended.withLock { $0 } }, "next() still blocked after interrupt()")
        // Whatever happened, the reader is released (the daemon's end closes the relay)
        // before the stream is closed.
        if !ended.withLock({ $0 }) {
            _ = daemon.stop(SIGTERM)
            Deadline.wait { ended.withLock { $0 } }
        }
        watch.close()
    }

    @Test("watch through an ssh that never answers shows the unavailable line after the call timeout, and retries")
    func watchSilentHost() throws {
        let directory = try TestDirectory()
        // A black-holed host: ssh runs, says nothing, and does not end. Each run tells its
        // pid, so that what the test's end leaves running can be ended.
        let path = directory.file("silent-ssh")
        try """
            #!/bin/sh
            echo $$ >> '\(directory.file("pids"))'
            exec sleep 60

            """.write(toFile: path, atomically: true, encoding: .utf8)
        let child = try ChildProcess(
            Binaries.swctl, ["--host", "desk", "watch", "w", "--format", "{state}"],
            environment: Binaries.childEnvironment.merging(["STOPWATCHD_SSH": "/bin/sh " + path]) { $1 }, captureOutput: true
        )
        defer {
            child.signal(SIGKILL)
            _ = child.wait(timeout: .seconds(10))
            let pids = ((try? String(contentsOfFile: directory.file("pids"), encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
            for pid in pids { kill(pid, SIGKILL) }
        }
        let lines = LineReader(try #require(child.output))
        let began = ContinuousClock.now
        let line = lines.next(timeout: .seconds(25)) { $0.contains("unavailable") }
        #expect(line != nil, "no unavailable line")
        #expect(ContinuousClock.now - began < .seconds(25))
        // And it tries again, through a new ssh.
        #expect(Deadline.wait(.seconds(15)) { (try? String(contentsOfFile: directory.file("pids"), encoding: .utf8))?.split(separator: "\n").count ?? 0 >= 2 })
    }

    @Test("swctl bridge with one socket as standard input and output forwards a oneway call sent just before the peer closes")
    func sameSocketOnewayThenClose() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let local = StopwatchClient(socketPath: daemon.socket)
        for round in 0..<5 {
            // Both ends close-on-exec: the bridge gets its end as 0 and 1 through dup2 alone,
            // so that no other child holds it open and our close is the peer's close.
            var ends: [Int32] = [-1, -1]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, ends[1], 0)
            posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
            _ = spawnClosesFrom(&actions, 3)
            let arguments: [String] = [Binaries.swctl, "--socket", daemon.socket, "bridge"]
            let argv = arguments.map { strdup($0) } + [nil]
            let envp = Binaries.childEnvironment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            var pid: pid_t = 0
            let spawned = posix_spawn(&pid, Binaries.swctl, &actions, nil, argv, envp)
            close(ends[1])
            guard spawned == 0 else {
                close(ends[0])
                Issue.record("posix_spawn: \(spawned)")
                return
            }
            let call = Array((#"{"method":"io.stopwatchd.Start","parameters":{"name":"one\#(round)"},"oneway":true}"# + "\0").utf8)
            #expect(call.withUnsafeBytes { write(ends[0], $0.baseAddress, $0.count) } == call.count)
            close(ends[0])
            var raw: Int32 = 0
            let reaped = Deadline.wait(.seconds(20)) { waitpid(pid, &raw, WNOHANG) == pid }
            if !reaped {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &raw, 0)
            }
            #expect(reaped && raw == 0, "round \(round): the bridge did not exit 0 (\(raw))")
            #expect(Deadline.wait(.seconds(5)) { (try? local.get("one\(round)"))?.state == .counting },
                    "round \(round): the oneway Start was lost")
        }
    }

    @Test("an ssh that warned, then went silent, is a timeout, with the warning only as what ssh said")
    func staleWarningAndTimeout() throws {
        let directory = try TestDirectory()
        let path = directory.file("warning-ssh")
        try """
            #!/bin/sh
            echo "Warning: Permanently added 'desk' (ED25519) to the list of known hosts." >&2
            exec sleep 60

            """.write(toFile: path, atomically: true, encoding: .utf8)
        let began = ContinuousClock.now
        let result = try remote(["status"], ssh: "/bin/sh " + path)
        #expect(ContinuousClock.now - began < .seconds(20))
        #expect(result.status == 69, "\(result.error)")
        #expect(result.error.contains("': no reply within 10s (ssh said: Warning: Permanently added 'desk' (ED25519) to the list of known hosts.)"),
                "\(result.error)")
    }

    @Test("wait --timeout through --host ends on time when the reconnection's ssh goes silent")
    func waitTimeoutAcrossSilentReconnection() throws {
        let directory = try TestDirectory()
        let notify = try SystemdNotifyTests.NotifySocket(path: directory.file("notify"))
        var daemon: DaemonProcess? = try DaemonProcess(socket: directory.socket, environment: ["NOTIFY_SOCKET": notify.path])
        // Counting: the wait is for its stop.
        _ = try StopwatchClient(socketPath: directory.socket).start("w")
        // The first run reaches the daemon; the next ones hang as a black-holed host does.
        let path = directory.file("once-ssh")
        try """
            #!/bin/sh
            echo $$ >> '\(directory.file("pids"))'
            if [ -e '\(directory.file("ran"))' ]; then exec sleep 60; fi
            : > '\(directory.file("ran"))'
            exec '\(Binaries.swctl)' --socket '\(directory.socket)' bridge

            """.write(toFile: path, atomically: true, encoding: .utf8)
        let began = ContinuousClock.now
        let child = try ChildProcess(
            Binaries.swctl, ["--host", "desk", "wait", "w", "--timeout", "4s"],
            environment: Binaries.childEnvironment.merging(["STOPWATCHD_SSH": "/bin/sh " + path]) { $1 }, captureError: true
        )
        defer {
            child.signal(SIGKILL)
            _ = child.wait(timeout: .seconds(10))
            let pids = ((try? String(contentsOfFile: directory.file("pids"), encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
            for pid in pids { kill(pid, SIGKILL) }
        }
        // Connected (the first ssh ran, and the daemon told the wait its first state through the
        // bridge, which relays it before the end that follows), then the daemon is gone. Gone
        // before that first state, the wait would be one that found no daemon (69).
        #expect(Deadline.wait(.seconds(10)) { FileManager.default.fileExists(atPath: directory.file("ran")) })
        #expect(notify.watched(1))
        #expect(daemon?.stop(SIGTERM) == 0)
        daemon = nil
        let status = child.wait(timeout: .seconds(30))
        #expect(status == .exited(124))
        #expect(ContinuousClock.now - began < .seconds(8), "the wait overran its 4 s")
    }
}
