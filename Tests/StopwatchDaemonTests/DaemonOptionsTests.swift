import LinuxSystem
import StopwatchProtocol
import Testing
@testable import StopwatchDaemon

@Suite("daemon command lines")
struct DaemonOptionsTests {
    @Test("--history-devices takes 0 to 1,024 other devices; more is refused, the maximum said")
    func historyDevicesIsCapped() throws {
        #expect(try DaemonOptions.parse(["--history-devices", "1024"]) == .run({ var expected = DaemonOptions(); expected.historyDevices = 1_024; return expected }()))
        #expect(try DaemonOptions.parse(["--history-devices", "0"]) == .run({ var expected = DaemonOptions(); expected.historyDevices = 0; return expected }()))
        #expect(throws: UsageError("--history-devices: '1025' is not a whole number from 0 to 1024")) {
            try DaemonOptions.parse(["--history-devices", "1025"])
        }
        #expect(DaemonOptions.usage.contains("(default 64, at most 1024)"))
    }

    @Test("daemon options")
    func daemonOptions() throws {
        guard case .run(let options) = try DaemonOptions.parse([
            "--tick=250ms", "--socket", "/tmp/s", "--allow-group", "stopwatch", "--max-connections", "8",
            "--log-level", "debug", "--write-timeout", "2s",
        ]) else {
            Issue.record("not a run")
            return
        }
        #expect(options.tick == .milliseconds(250))
        #expect(options.socketPath == "/tmp/s")
        #expect(options.allowGroup == "stopwatch")
        #expect(options.maximumConnections == 8)
        #expect(options.logLevel == .debug)
        #expect(options.writeTimeout == .seconds(2))
        #expect(try DaemonOptions.parse(["--help"]) == .help)
        #expect(try DaemonOptions.parse(["--version"]) == .version)
        #expect(throws: UsageError("--tick: 5ms is shorter than the minimum, 10ms")) { try DaemonOptions.parse(["--tick", "5ms"]) }
        #expect(throws: UsageError("--socket needs a value")) { try DaemonOptions.parse(["--socket"]) }
    }

    @Test("hook options")
    func hookOptions() throws {
        guard case .run(let defaults) = try DaemonOptions.parse([]) else {
            Issue.record("not a run")
            return
        }
        #expect(defaults.hookDirectory == nil)
        #expect(defaults.hookTimeout == .seconds(30))
        #expect(defaults.maximumHooksRunning == 4)
        #expect(defaults.hookBacklog == 100_000)
        guard case .run(let options) = try DaemonOptions.parse([
            "--hook-dir", "/etc/h", "--hook-timeout", "500ms", "--max-hooks-running", "2", "--hook-backlog=5",
        ]) else {
            Issue.record("not a run")
            return
        }
        #expect(options.hookDirectory == "/etc/h")
        #expect(options.hookTimeout == .milliseconds(500))
        #expect(options.maximumHooksRunning == 2)
        #expect(options.hookBacklog == 5)
        // Its name before the runs waited on disk is still understood.
        #expect(try DaemonOptions.parse(["--max-hooks-waiting", "7"]) == .run({ var expected = DaemonOptions(); expected.hookBacklog = 7; return expected }()))
        #expect(throws: UsageError("--hook-backlog: '0' is not a whole number from 1 to 10000000")) {
            try DaemonOptions.parse(["--hook-backlog", "0"])
        }
        #expect(throws: UsageError("--max-hooks-running: '65' is not a whole number from 1 to 64")) {
            try DaemonOptions.parse(["--max-hooks-running", "65"])
        }
        #expect(throws: UsageError("--max-hooks-running: '0' is not a whole number from 1 to 64")) {
            try DaemonOptions.parse(["--max-hooks-running", "0"])
        }
        #expect(throws: UsageError("--hook-timeout: 'soon' is not a duration like 500ms, 30s or 2m")) {
            try DaemonOptions.parse(["--hook-timeout", "soon"])
        }
        #expect(throws: UsageError("--hook-timeout: 25h is longer than the maximum, 24h")) {
            try DaemonOptions.parse(["--hook-timeout", "25h"])
        }
        #expect(throws: UsageError("--hook-dir needs a non-empty value")) { try DaemonOptions.parse(["--hook-dir", ""]) }
        #expect(DaemonOptions.usage.contains("--hook-dir DIR"))
        #expect(DaemonOptions.usage.contains("--hook-backlog N"))
    }

    @Test("--history-memory: bytes, or KiB, MiB, GiB (K, M, G); at least 64KiB; 32MiB by default")
    func historyMemory() throws {
        func parsed(_ text: String) throws -> Int? {
            guard case .run(let options) = try DaemonOptions.parse(["--history-memory", text]) else { return nil }
            return options.historyMemory
        }
        guard case .run(let defaults) = try DaemonOptions.parse([]) else {
            Issue.record("not a run")
            return
        }
        #expect(defaults.historyMemory == 32 << 20)
        #expect(try parsed("65536") == 65_536)
        #expect(try parsed("512KiB") == 512 << 10)
        #expect(try parsed("64MiB") == 64 << 20)
        #expect(try parsed("2G") == 2 << 30)
        #expect(try parsed("1M") == 1 << 20)
        for text in ["1KiB", "65535", "lots", "-1MiB", "MiB", "99999999999G", ""] {
            #expect(throws: UsageError("--history-memory: '\(text)' is not a size from 64KiB to 1024GiB, like 32MiB or 512KiB"), "\(text)") {
                try DaemonOptions.parse(["--history-memory", text])
            }
        }
        #expect(DaemonOptions.usage.contains("--history-memory SIZE"))
    }

    @Test("--history-dir, --device-id (32 lowercase hex digits) and --device-name (a name)")
    func historyFolderOptions() throws {
        guard case .run(let defaults) = try DaemonOptions.parse([]),
            case .run(let given) = try DaemonOptions.parse([
                "--history-dir", "/srv/sync/history", "--device-id", "0123456789abcdef0123456789abcdef", "--device-name", "laptop",
            ])
        else {
            Issue.record("not a run")
            return
        }
        #expect(defaults.historyDirectory == nil && defaults.deviceID == nil && defaults.deviceName == nil)
        #expect(given.historyDirectory == "/srv/sync/history")
        #expect(given.deviceID == "0123456789abcdef0123456789abcdef" && given.deviceName == "laptop")
        for text in ["0123456789ABCDEF0123456789ABCDEF", "0123", "0123456789abcdef0123456789abcdeg", ""] {
            #expect(throws: UsageError("--device-id: '\(text)' is not 32 lowercase hex digits"), "\(text)") {
                try DaemonOptions.parse(["--device-id", text])
            }
        }
        #expect(throws: UsageError.self) { try DaemonOptions.parse(["--device-name", " padded"]) }
        #expect(throws: UsageError.self) { try DaemonOptions.parse(["--history-dir", ""]) }
        for option in ["--history-dir DIR", "--device-id ID", "--device-name NAME"] { #expect(DaemonOptions.usage.contains(option)) }
    }

    @Test("the device id derived from a machine id: HMAC-SHA256 keyed by its bytes over the application id, 16 bytes, v4 UUID bits")
    func derivedDeviceID() {
        let id = DeviceIdentity.derived(machineID: "3d1219c7c4c5404aaa1f6d2a48adfda4\n")
        #expect(id.map(DeviceIdentity.isValid) == true)
        // Pinned: systemd-id128 (252) and Python's hmac give the same for this machine id.
        #expect(id == "8a8f701b329b4edd99208a7301520657")
        #expect(id == DeviceIdentity.derived(machineID: "3d1219c7c4c5404aaa1f6d2a48adfda4"))
        #expect(id != DeviceIdentity.derived(machineID: "3d1219c7c4c5404aaa1f6d2a48adfda5"))
        let digits: [UInt8] = Array((id ?? "").utf8)
        #expect(digits.count == 32 && digits[12] == UInt8(ascii: "4"))
        #expect(digits.count == 32 && Array("89ab".utf8).contains(digits[16]))
        #expect(DeviceIdentity.derived(machineID: "not a machine id") == nil)
        // RFC 4231 test case 2: HMAC-SHA256 itself.
        let mac = DeviceIdentity.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        let hex: [String] = mac.map { (byte: UInt8) -> String in byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }
        #expect(hex.joined() == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("--exit-idle: a positive duration up to 24h, minutes written 5m or 5min")
    func exitIdleOption() throws {
        guard case .run(let defaults) = try DaemonOptions.parse([]) else {
            Issue.record("not a run")
            return
        }
        #expect(defaults.exitIdle == nil)
        for (text, expected) in [("5min", Duration.seconds(300)), ("5m", .seconds(300)), ("1s", .seconds(1)), ("24h", .seconds(86_400))] {
            guard case .run(let options) = try DaemonOptions.parse(["--exit-idle", text]) else {
                Issue.record("not a run")
                return
            }
            #expect(options.exitIdle == expected, "\(text)")
        }
        #expect(throws: UsageError("--exit-idle: '0s' is not a duration like 500ms, 30s or 2m")) { try DaemonOptions.parse(["--exit-idle", "0s"]) }
        #expect(throws: UsageError("--exit-idle: 'never' is not a duration like 500ms, 30s or 2m")) { try DaemonOptions.parse(["--exit-idle", "never"]) }
        #expect(throws: UsageError("--exit-idle: 1441min is longer than the maximum, 24h")) { try DaemonOptions.parse(["--exit-idle", "1441min"]) }
        #expect(throws: UsageError("--exit-idle needs a value")) { try DaemonOptions.parse(["--exit-idle"]) }
        #expect(DaemonOptions.usage.contains("--exit-idle DUR"))
    }

    @Test("--exit-idle only with the socket systemd passed, and only when no path overrides it")
    func exitIdleNeedsActivation() throws {
        var options = DaemonOptions()
        let passed = ["LISTEN_PID": "\(CurrentProcess.id)", "LISTEN_FDS": "1"]
        // Without --exit-idle, anything goes.
        try Daemon.checkUsage(options, environment: ProcessEnvironment([:]))
        options.exitIdle = .seconds(1)
        try Daemon.checkUsage(options, environment: ProcessEnvironment(passed))
        let refusals: [(DaemonOptions, [String: String])] = [
            (options, [:]),
            // For another process, or none passed.
            (options, ["LISTEN_PID": "1", "LISTEN_FDS": "1"]),
            (options, ["LISTEN_PID": "\(CurrentProcess.id)", "LISTEN_FDS": "0"]),
            // A path chosen over systemd's socket.
            (options, passed.merging(["STOPWATCHD_SOCKET": "/tmp/s"]) { $1 }),
            ({ var withPath = options; withPath.socketPath = "/tmp/s"; return withPath }(), passed),
        ]
        for (options, environment) in refusals {
            #expect(throws: UsageError.self, "\(environment)") { try Daemon.checkUsage(options, environment: ProcessEnvironment(environment)) }
        }
        do {
            try Daemon.checkUsage(options, environment: ProcessEnvironment([:]))
        } catch {
            #expect(error.message.contains("socket activation"))
            #expect(error.message.contains("nothing would start stopwatchd again"))
        }
    }

    @Test("where the hooks are")
    func hookLocation() {
        #expect(HookLocation.path(option: "/x", environment: ProcessEnvironment([:]), isRoot: false) == "/x")
        #expect(HookLocation.path(option: nil, environment: ProcessEnvironment(["XDG_CONFIG_HOME": "/c", "HOME": "/h"]), isRoot: false) == "/c/stopwatchd/hooks")
        #expect(HookLocation.path(option: nil, environment: ProcessEnvironment(["HOME": "/h"]), isRoot: false) == "/h/.config/stopwatchd/hooks")
        #expect(HookLocation.path(option: nil, environment: ProcessEnvironment(["HOME": "/root"]), isRoot: true) == "/etc/stopwatchd/hooks")
    }
}
