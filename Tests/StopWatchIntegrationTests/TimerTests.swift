import Foundation
import StopwatchProtocol
import StopwatchdClient
import Testing
import Varlink

/// `swctl timer` and `swctl wait` against the real daemon: a countdown that ends, a wait
/// that times out, a wait that outlives a `kill -9` of the daemon (with the expiry falling
/// while it is down, too), `--keep` and `--off`, and the usage errors. Deadlines are
/// generous and only bound how long a test may take; what is checked is the order of
/// things, never clock values.
@Suite("timer and wait end to end")
struct TimerTests {
    /// The time a whole `swctl` run, or an expiry, may take on a loaded machine.
    static let deadline: Duration = .seconds(60)

    static func swctl(_ daemon: DaemonProcess, _ arguments: String...) throws -> Swctl {
        try Swctl.run(arguments, socket: daemon.socket)
    }

    /// The sockets the process `pid` holds (`socket:[inode]`): a `swctl wait` has connected
    /// once the daemon holds one it did not before. (Not a count: the connection of the
    /// `swctl` run just before may still be closing in the daemon.)
    static func sockets(of pid: pid_t) -> Set<String> {
        let directory = "/proc/\(pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Set(entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + $0) }
            .filter { $0.hasPrefix("socket:") })
    }

    /// Starts `swctl wait arguments` and returns once the daemon holds its connection.
    static func startWait(_ daemon: DaemonProcess, _ arguments: [String]) throws -> ChildProcess {
        let before = sockets(of: daemon.pid)
        let wait = try ChildProcess(
            Binaries.swctl, ["--socket", daemon.socket, "wait"] + arguments,
            environment: Binaries.childEnvironment, captureOutput: true, captureError: true
        )
        let connected = Deadline.wait(deadline) { !sockets(of: daemon.pid).isSubset(of: before) || !wait.isRunning }
        #expect(connected && wait.isRunning, "swctl wait did not connect: \(String(describing: wait.status))")
        return wait
    }

    @Test("swctl timer t 200ms && swctl wait t: 0, once the countdown has expired")
    func timerThenWait() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let started = ContinuousClock.now
        let timer = try Self.swctl(daemon, "timer", "t", "200ms")
        #expect(timer.status == 0, "\(timer.error)")
        #expect(timer.lines.first?.wholeMatch(of: /t counting (0:00:00\.\d left of 0:00:00\.2|\+\d+:\d\d:\d\d\.\d over 0:00:00\.2)/) != nil, "\(timer.output)")
        let wait = try Self.swctl(daemon, "wait", "t")
        #expect(wait.status == 0, "\(wait.error)")
        #expect(wait.output.isEmpty && wait.error.isEmpty)
        #expect(ContinuousClock.now - started >= .milliseconds(200), "wait returned before the countdown could expire")
        let status = try StopwatchClient(socketPath: daemon.socket).get("t")
        #expect(status.targetMs == 200 && status.elapsedMs >= 200)
        // Already expired: a second wait returns at once, with 0.
        #expect(try Self.swctl(daemon, "wait", "t").status == 0)
    }

    @Test("wait --timeout 100ms on a long countdown exits 124, no sooner than 100 ms")
    func timeout() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        #expect(try Self.swctl(daemon, "timer", "long", "1h").status == 0)
        let started = ContinuousClock.now
        let wait = try Self.swctl(daemon, "wait", "long", "--timeout", "100ms")
        #expect(wait.status == 124, "\(wait.error)")
        #expect(wait.output.isEmpty && wait.error.isEmpty)
        #expect(ContinuousClock.now - started >= .milliseconds(100))
        // A counting plain stopwatch waits for its stop; none comes.
        #expect(try Self.swctl(daemon, "start", "plain").status == 0)
        #expect(try Self.swctl(daemon, "wait", "plain", "--timeout", "50ms").status == 124)
    }

    @Test("wait survives a kill -9 and restart of the daemon, and ends at the expiry")
    func waitAcrossRestart() throws {
        let directory = try TestDirectory()
        var daemon = try DaemonProcess(socket: directory.socket)
        // Long enough to kill and restart the daemon before it ends, even under a sanitizer.
        #expect(try Self.swctl(daemon, "timer", "t", "4s").status == 0)
        let wait = try Self.startWait(daemon, ["t"])
        #expect(daemon.stop(SIGKILL) == 128 + SIGKILL)
        daemon = try DaemonProcess(socket: directory.socket)
        #expect(wait.isRunning, "swctl wait ended with the daemon: \(String(describing: wait.status))")
        let stopwatch = try StopwatchClient(socketPath: daemon.socket).get("t")
        #expect(stopwatch.targetMs == 4_000)
        #expect(wait.wait(timeout: Self.deadline) == .exited(0))
        #expect(try StopwatchClient(socketPath: daemon.socket).get("t").elapsedMs >= 4_000)
    }

    @Test("wait --timeout 0s (or 1ms) on a countdown already expired exits 0, every time: the first reply is not read against --timeout")
    func alreadyExpiredZeroTimeout() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        #expect(try Self.swctl(daemon, "timer", "t", "50ms").status == 0)
        let client = StopwatchClient(socketPath: daemon.socket)
        let expired = try Deadline.wait(Self.deadline) { try client.get("t").elapsedMs >= 50 }
        try #require(expired, "the 50 ms countdown did not expire")
        // The answer is there at once, but not in the socket yet when swctl first looks:
        // a race, so many runs.
        for run in 0..<20 {
            let timeout = run.isMultiple(of: 2) ? "0s" : "1ms"
            let wait = try Self.swctl(daemon, "wait", "t", "--timeout", timeout)
            #expect(wait.status == 0, "run \(run), --timeout \(timeout): \(wait.status) \(wait.error)")
            #expect(wait.output.isEmpty && wait.error.isEmpty)
        }
        // Not expired: 0s is still a timeout, once the state is read.
        #expect(try Self.swctl(daemon, "timer", "long", "1h").status == 0)
        #expect(try Self.swctl(daemon, "wait", "long", "--timeout", "0s").status == 124)
    }

    @Test("reset while wait reconnects is a stop and a change, not a removal; a removal meanwhile still exits 1")
    func resetWhileReconnecting() throws {
        let directory = try TestDirectory()
        let notify = try SystemdNotifyTests.NotifySocket(path: directory.file("notify"))
        var daemon = try DaemonProcess(socket: directory.socket, environment: ["NOTIFY_SOCKET": notify.path])
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("paused")
        _ = try client.stop("paused")
        _ = try client.start("counting")
        _ = try client.start("gone")
        _ = try client.stop("gone")
        let change = try Self.startWait(daemon, ["paused", "--for", "change"])
        let stop = try Self.startWait(daemon, ["counting", "--for", "stop"])
        let removed = try Self.startWait(daemon, ["gone", "--for", "change"])
        // Each has been told its first state: a wait that never saw "gone" would rightly wait on.
        #expect(notify.watched(3))
        #expect(daemon.stop(SIGKILL) == 128 + SIGKILL)
        // While the waits knock on the empty socket, another daemon on the same state, on a
        // socket of its own, resets two stopwatches and removes the third.
        let side = try DaemonProcess(
            socket: directory.file("side.sock"), arguments: ["--state-dir", DaemonProcess.stateDirectory(for: directory.socket)]
        )
        let sideClient = StopwatchClient(socketPath: side.socket)
        _ = try sideClient.reset("paused")
        _ = try sideClient.stop("counting")
        _ = try sideClient.reset("counting")
        try sideClient.remove("gone")
        #expect(side.stop() == 0)
        #expect(change.isRunning && stop.isRunning && removed.isRunning)
        daemon = try DaemonProcess(socket: directory.socket)
        #expect(change.wait(timeout: Self.deadline) == .exited(0))
        #expect(stop.wait(timeout: Self.deadline) == .exited(0))
        #expect(removed.wait(timeout: Self.deadline) == .exited(1))
        let error = removed.error.map { ChildProcess.readAll($0, timeout: .seconds(10)) } ?? ""
        #expect(error == "swctl: 'gone' was removed while waiting for it: nothing left to wait for\n")
    }

    @Test("an expiry that fell while the daemon was down still ends the wait, once it is back")
    func expiryWhileDown() throws {
        let directory = try TestDirectory()
        var daemon = try DaemonProcess(socket: directory.socket)
        #expect(try Self.swctl(daemon, "timer", "t", "1s").status == 0)
        let expiry = ContinuousClock.now + .seconds(1)
        let wait = try Self.startWait(daemon, ["t", "--for", "expired"])
        #expect(daemon.stop(SIGKILL) == 128 + SIGKILL)
        // The countdown's instant passes while no daemon runs: wait keeps trying.
        Deadline.wait(Self.deadline) { ContinuousClock.now > expiry + .milliseconds(300) }
        #expect(wait.isRunning, "swctl wait ended while the daemon was down: \(String(describing: wait.status))")
        daemon = try DaemonProcess(socket: directory.socket)
        #expect(wait.wait(timeout: Self.deadline) == .exited(0))
    }

    @Test("wait: 1 when the stopwatch is removed, 69 when no daemon answers at the start")
    func removedAndUnreachable() throws {
        let directory = try TestDirectory()
        let notify = try SystemdNotifyTests.NotifySocket(path: directory.file("notify"))
        let daemon = try DaemonProcess(socket: directory.socket, environment: ["NOTIFY_SOCKET": notify.path])
        #expect(try Self.swctl(daemon, "timer", "gone", "1h").status == 0)
        let wait = try Self.startWait(daemon, ["gone"])
        // Told the countdown first: one that never saw it would wait for a change instead.
        #expect(notify.watched(1))
        #expect(try Self.swctl(daemon, "remove", "gone").status == 0)
        #expect(wait.wait(timeout: Self.deadline) == .exited(1))
        let error = wait.error.map { ChildProcess.readAll($0, timeout: .seconds(10)) } ?? ""
        #expect(error == "swctl: 'gone' was removed while waiting for it: nothing left to wait for\n")
        let unreachable = try Swctl.run(["wait", "x", "--timeout", "1s"], socket: directory.file("none.sock"))
        #expect(unreachable.status == 69)
    }

    @Test("wait --for stop, and the default for a plain stopwatch, end at the stop; --for change at any change")
    func stopAndChange() throws {
        let directory = try TestDirectory()
        let notify = try SystemdNotifyTests.NotifySocket(path: directory.file("notify"))
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "50ms"], environment: ["NOTIFY_SOCKET": notify.path])
        #expect(try Self.swctl(daemon, "start", "w").status == 0)
        let stop = try Self.startWait(daemon, ["w", "--for", "stop"])
        let plain = try Self.startWait(daemon, ["w"])
        let change = try Self.startWait(daemon, ["w", "--for", "change"])
        // All told the state before the lap, or the lap would be their first state.
        #expect(notify.watched(3))
        // Ticks come every 50 ms and end none.
        #expect(try Self.swctl(daemon, "lap", "w").status == 0)
        #expect(change.wait(timeout: Self.deadline) == .exited(0))
        #expect(stop.isRunning && plain.isRunning)
        #expect(try Self.swctl(daemon, "stop", "w").status == 0)
        #expect(stop.wait(timeout: Self.deadline) == .exited(0))
        #expect(plain.wait(timeout: Self.deadline) == .exited(0))
    }

    @Test("wait on a plain stopwatch means until it is done: paused or stopped, 0 at once; counting, 0 at its stop")
    func waitUntilDone() throws {
        let directory = try TestDirectory()
        let notify = try SystemdNotifyTests.NotifySocket(path: directory.file("notify"))
        let daemon = try DaemonProcess(socket: directory.socket, environment: ["NOTIFY_SOCKET": notify.path])
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("café")
        _ = try client.stop("café")
        _ = try client.start("reset")
        _ = try client.stop("reset")
        _ = try client.reset("reset")
        // At once: a --timeout only bounds how long a wrong answer would take to show.
        for name in ["café", "reset"] {
            let wait = try Self.swctl(daemon, "wait", name, "--timeout", "20s")
            #expect(wait.status == 0, "\(name): \(wait.status) \(wait.error)")
            #expect(wait.output.isEmpty && wait.error.isEmpty)
        }
        _ = try client.start("café")
        let counting = try Self.startWait(daemon, ["café"])
        // Watching, so told the counting state: a wait that wrongly ended on it has ended by now.
        #expect(notify.watched(1))
        #expect(counting.isRunning)
        _ = try client.stop("café")
        #expect(counting.wait(timeout: Self.deadline) == .exited(0))
    }

    @Test("wait on a name never created: --for change waits for it to come; the default, 1 and one line naming it, pointing at swctl list, with a close name")
    func waitNeverCreated() throws {
        let directory = try TestDirectory()
        let notify = try SystemdNotifyTests.NotifySocket(path: directory.file("notify"))
        let daemon = try DaemonProcess(socket: directory.socket, environment: ["NOTIFY_SOCKET": notify.path])
        #expect(try Self.swctl(daemon, "start", "tea").status == 0)
        // A wait for a change sees it come (the first watcher the daemon reports).
        let change = try Self.startWait(daemon, ["coffee", "--for", "change"])
        #expect(notify.watched(1))
        #expect(try Self.swctl(daemon, "start", "coffee").status == 0)
        #expect(change.wait(timeout: Self.deadline) == .exited(0))
        for (arguments, message) in [
            (["tae"], "swctl: there is no stopwatch 'tae' (see 'swctl list'); did you mean 'tea'?\n"),
            (["milk", "--for", "stop"], "swctl: there is no stopwatch 'milk' (see 'swctl list')\n"),
        ] {
            let wait = try Swctl.run(["wait"] + arguments + ["--timeout", "20s"], socket: daemon.socket)
            #expect(wait.status == 1, "\(arguments): \(wait.status) \(wait.error)")
            #expect(wait.error == message && wait.output.isEmpty)
        }
        #expect(try StopwatchClient(socketPath: daemon.socket).list().map(\.name) == ["coffee", "tea"])
    }

    @Test("timer over a stopwatch with laps says how many it cleared; without laps, or on a new name, nothing more")
    func timerSaysLapsCleared() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("tea")
        _ = try client.lap("tea")
        _ = try client.lap("tea")
        var timer = try Self.swctl(daemon, "timer", "tea", "3m")
        #expect(timer.status == 0, "\(timer.error)")
        #expect(timer.lines.count == 1 && timer.lines[0].wholeMatch(of: /tea counting \d:\d\d:\d\d left of 0:03:00 \(2 laps cleared\)/) != nil, "\(timer.output)")
        timer = try Self.swctl(daemon, "timer", "tea", "3m")
        #expect(timer.lines.count == 1 && timer.lines[0].wholeMatch(of: /tea counting \d:\d\d:\d\d left of 0:03:00/) != nil, "\(timer.output)")
        _ = try client.lap("tea")
        timer = try Self.swctl(daemon, "timer", "tea", "1d12h")
        #expect(timer.lines.first?.hasSuffix(" left of 36:00:00 (1 lap cleared)") == true, "\(timer.output)")
        // --json is the Stopwatch object alone.
        _ = try client.lap("tea")
        let json = try Self.swctl(daemon, "--json", "timer", "tea", "2d")
        let stopwatch = try Stopwatch(json: JSONParser.parse(json.output.trimmingCharacters(in: .newlines)))
        #expect(stopwatch.targetMs == 2 * 86_400_000 && stopwatch.lapsMs.isEmpty)
        #expect(try Self.swctl(daemon, "timer", "new", "1m").lines.first?.hasSuffix("left of 0:01:00") == true)
    }

    @Test("a negative duration is told as one: exit 2, one line, nothing sent")
    func negativeDuration() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let result = try Swctl.run(["timer", "egg", "-1m"], socket: daemon.socket)
        #expect(result.status == 2 && result.output.isEmpty)
        #expect(result.error == "swctl: '-1m' is not a duration: a timer needs a positive one, such as 1m (see swctl --help)\n")
        #expect(try StopwatchClient(socketPath: daemon.socket).list().isEmpty)
    }

    @Test("timer --keep sets a target and counts on; --off makes it plain again")
    func keepAndOff() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let client = StopwatchClient(socketPath: daemon.socket)
        _ = try client.start("work")
        _ = try client.lap("work")
        let keep = try Self.swctl(daemon, "--json", "timer", "work", "2h", "--keep")
        #expect(keep.status == 0, "\(keep.error)")
        let kept = try Stopwatch(json: JSONParser.parse(keep.output.trimmingCharacters(in: .newlines)))
        #expect(kept.state == .counting && kept.targetMs == 7_200_000 && kept.lapsMs.count == 1)
        let status = try Self.swctl(daemon, "status", "work")
        #expect(status.lines.first?.wholeMatch(of: /work counting \d:\d\d:\d\d left of 2:00:00 \(1 lap\)/) != nil, "\(status.output)")
        let list = try Self.swctl(daemon, "list")
        #expect(list.lines.first?.wholeMatch(of: /NAME +STATE +ELAPSED +REMAINING +LAPS/) != nil, "\(list.output)")
        let off = try Self.swctl(daemon, "timer", "work", "--off")
        #expect(off.status == 0)
        #expect(off.lines.first?.wholeMatch(of: /work counting \d+:\d\d:\d\d \(1 lap\)/) != nil, "\(off.output)")
        let plain = try client.get("work")
        #expect(plain.targetMs == nil && plain.state == .counting && plain.lapsMs.count == 1)
        #expect(plain.elapsedMs >= kept.elapsedMs)
    }

    @Test("bad durations: exit 2, one line naming the range and the forms, nothing sent",
          arguments: [["timer", "t", "0s"], ["timer", "367d"], ["timer", "9000h"], ["timer", "t", "abc"], ["timer"],
                      ["timer", "t", "1m", "--keep", "--off"], ["wait", "--timeout", "soon"], ["wait", "--for", "ever"]])
    func badDurations(arguments: [String]) throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let result = try Swctl.run(arguments, socket: daemon.socket)
        #expect(result.status == 2)
        #expect(result.output.isEmpty)
        #expect(result.error.hasPrefix("swctl: ") && result.error.split(separator: "\n").count == 1, "\(result.error)")
        if arguments.count > 1, arguments[0] == "timer", !arguments.contains("--off") {
            #expect(result.error.contains("from 1ms to 366 days") && result.error.contains("250ms, 1s, 1.5s, 2m, 1h, 1h30m, 2d or 1d12h"), "\(result.error)")
        }
        #expect(try StopwatchClient(socketPath: daemon.socket).list().isEmpty)
    }

    @Test("watch --format waybar: the time left, then the class expired at the target")
    func waybarExpired() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket)
        let watch = try SwctlProcess(["watch", "egg", "--format", "waybar"], socket: daemon.socket)
        _ = try #require(watch.lines.next(timeout: Self.deadline))
        #expect(try Self.swctl(daemon, "timer", "egg", "300ms").status == 0)
        let expired = watch.lines.next(timeout: Self.deadline) { $0.contains(#""class":"expired""#) }
        #expect(expired?.wholeMatch(of: /\{"text":"(0:00:00\.0|\+\d:\d\d:\d\d\.\d)","tooltip":"egg: counting at \d:\d\d:\d\d\.\d, target 0:00:00\.3","class":"expired"\}/) != nil,
                "\(String(describing: expired))")
    }
}
