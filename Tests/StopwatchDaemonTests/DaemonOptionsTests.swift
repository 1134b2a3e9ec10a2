import LinuxSystem
import StopwatchProtocol
import Testing
@testable import StopwatchDaemon

@Suite("daemon command lines")
struct DaemonOptionsTests {
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
}
