import Foundation
import Testing

/// `swctl status` through its quick path (`--socket PATH`) and through the full client (the
/// user socket, found by looking: the quick path leaves that to the full client), against one
/// daemon: the same output, errors and exit status, for every kind of stopwatch.
@Suite("swctl status: quick path and full client alike")
struct QuickStatusEndToEndTests {
    let directory: TestDirectory
    let daemon: DaemonProcess
    let runtime: String

    init() throws {
        directory = try TestDirectory()
        runtime = directory.path + "/rt"
        #expect(mkdir(runtime, 0o700) == 0 && mkdir(runtime + "/stopwatchd", 0o700) == 0)
        daemon = try DaemonProcess(socket: runtime + "/stopwatchd/stopwatchd.sock")
    }

    func quick(_ arguments: [String], _ environment: [String: String]) throws -> Swctl {
        try Swctl.run(arguments, socket: daemon.socket, environment: environment)
    }

    func full(_ arguments: [String], _ environment: [String: String]) throws -> Swctl {
        try Swctl.run(arguments, socket: nil, environment: environment.merging(["XDG_RUNTIME_DIR": runtime]) { $1 })
    }

    func swctl(_ arguments: String...) throws {
        let result = try Swctl.run(arguments, socket: daemon.socket)
        #expect(result.status == 0, "\(arguments): \(result.error)")
    }

    /// The two alike, asked back to back. A counting stopwatch may pass a second between
    /// them: up to five pairs, and one alike is enough.
    func expectAlike(_ arguments: [String], _ environment: [String: String] = [:]) throws {
        var pairs: [String] = []
        for _ in 0..<5 {
            let quick = try quick(arguments, environment), full = try full(arguments, environment)
            if quick.output == full.output, quick.error == full.error, quick.status == full.status {
                #expect(!quick.output.isEmpty || !quick.error.isEmpty)
                return
            }
            pairs.append("quick \(quick.status) '\(quick.output)' '\(quick.error)' / full \(full.status) '\(full.output)' '\(full.error)'")
        }
        Issue.record("\(arguments) \(environment): never alike: \(pairs)")
    }

    @Test("every kind of stopwatch, and the cases the quick path leaves to the full client")
    func everyKindAlike() throws {
        try swctl("start", "work")
        try swctl("start", "paused")
        try swctl("stop", "paused")
        try swctl("start", "lapped")
        try swctl("lap", "lapped")
        try swctl("timer", "tea", "5m")
        try swctl("start", "noted", "--note", "chapter 3")
        try swctl("start", "awake")
        try swctl("skip-sleep", "awake")
        try swctl("pomodoro", "pomo")
        try swctl("start", "café")
        try swctl("start", "a b")
        for name in ["work", "paused", "lapped", "tea", "noted", "awake", "pomo", "café", "a b", "never-made"] {
            try expectAlike(["status", name])
        }
        try expectAlike(["status"])
        try expectAlike(["status", "paused"], ["STOPWATCHD_TICK": "100ms"])
        try expectAlike(["--json", "status", "paused"])
        try expectAlike(["status", "bad/name"])
    }
}
