import Foundation
import LinuxSystem
import Testing

/// What a careless parent leaves to stopwatchd and swctl, and what they must not pass on or
/// suffer from: an ignored SIGCHLD, a blocked signal mask, descriptors left open, sockets
/// passed but not used.
@Suite("what a parent leaves: signals and descriptors")
struct InheritedStateTests {
    let directory: TestDirectory
    var hooks: String { directory.path + "/hooks" }

    init() throws {
        directory = try TestDirectory()
        try FileManager.default.createDirectory(atPath: hooks, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    }

    /// Runs the command after it with SIGCHLD ignored, as `trap '' CHLD` leaves it to what it
    /// executes (bash: dash's `trap` does not reach an exec'd program for SIGCHLD), and the
    /// ignores that are to be kept (`keptIgnored`) too.
    static let ignoringChildren = ["/bin/bash", "-c", #"trap '' CHLD TTOU TTIN TSTP XFSZ; exec "$0" "$@""#]
    /// Ignores a parent may leave that only spare the process a stop or an end: kept.
    static let keptIgnored: Set<Int32> = [SIGTTOU, SIGTTIN, SIGTSTP, SIGXFSZ]
    /// What a parent may leave blocked. (Not SIGCHLD: bash unblocks it for itself.)
    static let blocked = [SIGTERM, SIGALRM, SIGUSR1]

    /// The signals `field` (SigIgn, SigBlk) of /proc/PID/status lists, from its hex mask.
    static func signals(_ field: String, inStatus status: String) -> Set<Int32> {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let mask = UInt64(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return [] }
        return Set((1...64).filter { mask & (1 << UInt64($0 - 1)) != 0 }.map { Int32($0) })
    }

    func hook(_ name: String, _ body: String) throws {
        let path = hooks + "/" + name
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
    }

    func contents(_ name: String) -> String? { try? String(contentsOfFile: directory.file(name), encoding: .utf8) }

    @Test("the launchers of these tests leave what they say: SIGCHLD and the kept ones ignored, the mask blocked")
    func launcherLeavesIt() throws {
        let probe = try ChildProcess(
            Self.ignoringChildren[0], Array(Self.ignoringChildren.dropFirst()) + ["/bin/cat", "/proc/self/status"],
            environment: Binaries.childEnvironment, captureOutput: true, blockedSignals: Self.blocked
        )
        let status = ChildProcess.readAll(try #require(probe.output))
        #expect(probe.wait() == .exited(0))
        #expect(Self.signals("SigIgn", inStatus: status).isSuperset(of: Self.keptIgnored.union([SIGCHLD])), "\(status)")
        #expect(Self.signals("SigBlk", inStatus: status).isSuperset(of: Self.blocked), "\(status)")
    }

    @Test("stopwatchd started with SIGCHLD ignored and signals blocked: hooks' exit statuses are logged, its SIGCHLD is its default again; SIGTTOU, SIGTTIN, SIGTSTP, SIGXFSZ stay ignored")
    func daemonResetsSignals() throws {
        try hook("fails", "exit 3")
        try hook("works", "exit 0")
        let daemon = try DaemonProcess(
            socket: directory.socket, arguments: ["--hook-dir", hooks, "--log-level", "debug"],
            launcher: Self.ignoringChildren, blockedSignals: Self.blocked
        )
        let status = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
        #expect(!Self.signals("SigIgn", inStatus: status).contains(SIGCHLD), "\(status)")
        // Their defaults only stop or end it: a daemon started in the background under
        // `stty tostop` stopped at its first line of log, a write past RLIMIT_FSIZE a core dump.
        #expect(Self.signals("SigIgn", inStatus: status).isSuperset(of: Self.keptIgnored), "\(status)")
        #expect(try Swctl.run(["start", "x"], socket: daemon.socket).status == 0)
        #expect(daemon.waitForLog(containing: "hook fails (start of 'x') failed: exited with status 3"), "\(daemon.readLog())")
        #expect(daemon.waitForLog(containing: "hook works (start of 'x') succeeded"), "\(daemon.readLog())")
        #expect(!daemon.readLog().contains("cannot reap"), "\(daemon.readLog())")
        // SIGTERM, blocked at start, still stops it (DaemonProcess checks the exit status).
    }

    @Test("swctl --host started with SIGCHLD ignored: the ssh's exit status is told, and a call through ssh works")
    func swctlResetsSignals() throws {
        let silent = directory.file("silent-ssh")
        try "#!/bin/sh\nexit 255\n".write(toFile: silent, atomically: true, encoding: .utf8)
        let failed = try ChildProcess.run(
            Self.ignoringChildren[0], Array(Self.ignoringChildren.dropFirst()) + [Binaries.swctl, "--host", "nowhere", "status"],
            environment: Binaries.childEnvironment.merging(["STOPWATCHD_SSH": "/bin/sh " + silent]) { $1 }
        )
        #expect(failed.status == 69, "\(failed.error)")
        #expect(failed.error.contains("it exited with status 255"), "\(failed.error)")

        let daemon = try DaemonProcess(socket: directory.socket)
        let ssh = try BridgeTests.fakeSSH(in: directory)
        #expect(try Swctl.run(["start", "tea"], socket: daemon.socket).status == 0)
        let status = try ChildProcess.run(
            Self.ignoringChildren[0], Array(Self.ignoringChildren.dropFirst()) + [Binaries.swctl, "--host", "desk", "status", "tea"],
            environment: Binaries.childEnvironment.merging(["STOPWATCHD_SSH": ssh]) { $1 }
        )
        #expect(status.status == 0, "\(status.error)")
        #expect(status.output.hasPrefix("tea counting"), "\(status.output)")
        // Not timed: with SIGCHLD ignored the ssh, reaped by the kernel, was waited for 1 s
        // (SIGTERM's grace), then sent SIGKILL; on a loaded machine the whole run (bash,
        // swctl, a fake ssh, a bridge, the daemon) may take as long. The exit status above
        // is what fails without the reset.
    }

    /// The descriptors of the hook `fds` (its shell's: `ls` runs as its child) that are none
    /// of what the runner gives it: its input (fd 0), its output pipe (fd 2, and fd 1 before
    /// the shell redirected it, which it keeps a copy of) and its own script (fd 3, which it
    /// runs, and the shell's copy); as "N -> target".
    func unexpectedHookDescriptors() -> [String] {
        let script = (try? FileManager.default.destinationOfSymbolicLink(atPath: hooks + "/fds")) ?? hooks + "/fds"
        let entries = (contents("fds") ?? "").split(separator: "\n").compactMap { line -> (number: String, target: String)? in
            guard let arrow = line.range(of: " -> ") else { return nil }
            return (line[..<arrow.lowerBound].split(separator: " ").last.map(String.init) ?? "", String(line[arrow.upperBound...]))
        }
        let given = Set(entries.filter { ["0", "2"].contains($0.number) }.map(\.target) + [script])
        return entries.filter { $0.number != "1" && !given.contains($0.target) }.map { "\($0.number) -> \($0.target)" }
    }

    func listDescriptorsHook() throws {
        try hook("fds", "ls -l /proc/$$/fd > \(directory.file("fds.tmp")); mv \(directory.file("fds.tmp")) \(directory.file("fds"))")
    }

    @Test("a descriptor the launching shell left open reaches no hook")
    func inheritedDescriptor() throws {
        try listDescriptorsHook()
        let marker = directory.file("left-open")
        try "x".write(toFile: marker, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(
            socket: directory.socket, arguments: ["--hook-dir", hooks],
            launcher: ["/bin/sh", "-c", #"exec 7<"$0" 9>>"$0"; exec "$@""#, marker]
        )
        let daemonDescriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/fd")
        #expect(daemonDescriptors.contains("7"), "the launcher left fd 7 open: \(daemonDescriptors)")
        #expect(try Swctl.run(["start", "x"], socket: daemon.socket).status == 0)
        #expect(Deadline.wait { contents("fds") != nil })
        #expect(contents("fds")?.contains(" 2 -> pipe:") == true, "\(contents("fds") ?? "")")
        #expect(unexpectedHookDescriptors() == [], "\(contents("fds") ?? "")")
    }

    @Test("LISTEN_FDS=2 with --socket: the sockets passed are closed, and reach no hook")
    func unusedActivationSockets() throws {
        try listDescriptorsHook()
        let passed = [directory.file("passed-3"), directory.file("passed-4")]
        for file in passed { try "x".write(toFile: file, atomically: true, encoding: .utf8) }
        let daemon = try DaemonProcess(
            socket: directory.socket, arguments: ["--hook-dir", hooks],
            launcher: ["/bin/sh", "-c", #"exec 3<"$0" 4<"$1"; shift; export LISTEN_PID=$$ LISTEN_FDS=2; exec "$@""#] + passed
        )
        let daemonTargets = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(daemon.pid)/fd/\($0)")
        }
        #expect(!daemonTargets.contains { passed.contains($0) }, "\(daemonTargets)")
        #expect(try Swctl.run(["start", "x"], socket: daemon.socket).status == 0)
        #expect(Deadline.wait { contents("fds") != nil })
        #expect(unexpectedHookDescriptors() == [], "\(contents("fds") ?? "")")
    }
}
