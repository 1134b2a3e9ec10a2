import Foundation
import StopWatchCore
import StopwatchProtocol
import StopwatchdClient
import Testing
import Varlink

/// Every method and error of SPEC §3, in raw varlink against the real daemon.
@Suite("varlink protocol against the real daemon")
struct ProtocolTests {
    let directory: TestDirectory
    let daemon: DaemonProcess

    init() throws {
        directory = try TestDirectory()
        daemon = try DaemonProcess(socket: directory.socket, arguments: ["--max-stopwatches", "3"])
    }

    func connect() throws -> RawConnection { try RawConnection(daemon.socket) }

    @Test("Start, Lap, Stop, Toggle, Reset: each replies with the stopwatch after it")
    func commands() throws {
        let connection = try connect()
        try connection.call("io.stopwatchd.Start", #"{"name":"tea"}"#)
        let started = try #require(try connection.reply()?.stopwatch)
        #expect(started.name == "tea" && started.state == .counting && started.lapsMs.isEmpty)

        try connection.call("io.stopwatchd.Lap", #"{"name":"tea"}"#)
        let lapped = try #require(try connection.reply()?.stopwatch)
        #expect(lapped.state == .counting && lapped.lapsMs.count == 1)

        try connection.call("io.stopwatchd.Stop", #"{"name":"tea"}"#)
        let stopped = try #require(try connection.reply()?.stopwatch)
        #expect(stopped.state == .pause && stopped.elapsedMs >= lapped.lapsMs[0])

        try connection.call("io.stopwatchd.Toggle", #"{"name":"tea"}"#)
        #expect(try connection.reply()?.stopwatch?.state == .counting)
        try connection.call("io.stopwatchd.Toggle", #"{"name":"tea"}"#)
        #expect(try connection.reply()?.stopwatch?.state == .pause)

        try connection.call("io.stopwatchd.Reset", #"{"name":"tea"}"#)
        #expect(try connection.reply()?.stopwatch == Stopwatch(name: "tea", state: .stopped, elapsedMs: 0, lapsMs: []))
    }

    @Test("the name defaults to \"default\"; null counts as absent")
    func defaultName() throws {
        let connection = try connect()
        try connection.call("io.stopwatchd.Start")
        #expect(try connection.reply()?.stopwatch?.name == "default")
        try connection.call("io.stopwatchd.Get", #"{"name":null}"#)
        #expect(try connection.reply()?.stopwatch?.state == .counting)
    }

    @Test("replies while counting report the elapsed time at the moment of the reply, not the last tick")
    func elapsedAtReply() throws {
        let connection = try connect()
        try connection.call("io.stopwatchd.Start")
        _ = try connection.reply()
        let started = ContinuousClock.now
        Deadline.wait { ContinuousClock.now - started > .milliseconds(350) }
        try connection.call("io.stopwatchd.Get")
        // The tick is 1 s: a value from the last tick would still be 0.
        let elapsed = try #require(try connection.reply()?.stopwatch?.elapsedMs)
        #expect(elapsed >= 350 && elapsed < 20_000)
    }

    @Test("Get and Watch do not create; List shows the created ones sorted; Remove deletes, an unknown name is NoSuchStopwatch")
    func getListRemove() throws {
        let connection = try connect()
        try connection.call("io.stopwatchd.Get", #"{"name":"ghost"}"#)
        #expect(try connection.reply()?.stopwatch == Stopwatch(name: "ghost", state: .stopped, elapsedMs: 0))
        for name in ["b", "a"] {
            try connection.call("io.stopwatchd.Start", #"{"name":"\#(name)"}"#)
            _ = try connection.reply()
        }
        try connection.call("io.stopwatchd.List")
        guard case .array(let listed)? = try connection.reply()?.parameters["stopwatches"] else {
            Issue.record("List has no stopwatches array")
            return
        }
        #expect(try listed.map { try Stopwatch(json: $0).name } == ["a", "b"])

        try connection.call("io.stopwatchd.Remove", #"{"name":"a"}"#)
        #expect(try connection.reply()?.parameters == [:])
        try connection.call("io.stopwatchd.Remove", #"{"name":"never"}"#)
        #expect(try connection.reply()?.errorName == "io.stopwatchd.NoSuchStopwatch")
        try connection.call("io.stopwatchd.List")
        guard case .array(let after)? = try connection.reply()?.parameters["stopwatches"] else {
            Issue.record("List has no stopwatches array")
            return
        }
        #expect(try after.map { try Stopwatch(json: $0).name } == ["b"])
    }

    @Test("no-op commands succeed and return the stopwatch unchanged")
    func noOps() throws {
        let connection = try connect()
        try connection.call("io.stopwatchd.Start", #"{"name":"x"}"#)
        _ = try connection.reply()
        try connection.call("io.stopwatchd.Start", #"{"name":"x"}"#)
        #expect(try connection.reply()?.stopwatch?.state == .counting)
        try connection.call("io.stopwatchd.Stop", #"{"name":"x"}"#)
        let paused = try #require(try connection.reply()?.stopwatch)
        try connection.call("io.stopwatchd.Stop", #"{"name":"x"}"#)
        #expect(try connection.reply()?.stopwatch == paused)
        try connection.call("io.stopwatchd.Reset", #"{"name":"x"}"#)
        #expect(try connection.reply()?.stopwatch?.state == .stopped)
        try connection.call("io.stopwatchd.Reset", #"{"name":"x"}"#)
        #expect(try connection.reply()?.stopwatch == Stopwatch(name: "x", state: .stopped, elapsedMs: 0))
    }

    @Test("Stop, Reset, Lap and Remove of a name never created: NoSuchStopwatch naming it, and nothing is created")
    func noSuchStopwatch() throws {
        let connection = try connect()
        for method in ["Stop", "Reset", "Lap", "Remove"] {
            try connection.call("io.stopwatchd.\(method)", #"{"name":"tae"}"#)
            let refusal = try #require(try connection.reply())
            #expect(refusal.errorName == "io.stopwatchd.NoSuchStopwatch", "\(method)")
            #expect(refusal.parameters == ["name": .string("tae")], "\(method)")
        }
        try connection.call("io.stopwatchd.Stop")
        #expect(try connection.reply()?.parameters == ["name": .string("default")])
        try connection.call("io.stopwatchd.List")
        #expect(try connection.reply()?.parameters["stopwatches"] == .array([]))
    }

    @Test("laps beyond --max-laps: TooManyLaps with the limit, and nothing changes; a reset makes room")
    func lapLimit() throws {
        let directory = try TestDirectory()
        let limited = try DaemonProcess(socket: directory.socket, arguments: ["--max-laps", "3"])
        let connection = try RawConnection(limited.socket)
        try connection.call("io.stopwatchd.Start")
        _ = try connection.reply()
        for count in 1...3 {
            try connection.call("io.stopwatchd.Lap")
            #expect(try connection.reply()?.stopwatch?.lapsMs.count == count)
        }
        try connection.call("io.stopwatchd.Lap")
        let refusal = try #require(try connection.reply())
        #expect(refusal.errorName == "io.stopwatchd.TooManyLaps")
        #expect(refusal.parameters["limit"] == .int(3))
        try connection.call("io.stopwatchd.Get")
        #expect(try connection.reply()?.stopwatch?.lapsMs.count == 3)
        for method in ["Stop", "Reset", "Start", "Lap"] { try connection.call("io.stopwatchd.\(method)") }
        for _ in 0..<3 { _ = try connection.reply() }
        #expect(try connection.reply()?.stopwatch?.lapsMs.count == 1)
    }

    @Test("refusals: InvalidTransition for reset while counting and for lap when not counting")
    func invalidTransitions() throws {
        let connection = try connect()
        try connection.call("io.stopwatchd.SetTarget", #"{"target_ms":null}"#)
        _ = try connection.reply()
        try connection.call("io.stopwatchd.Lap")
        let lap = try #require(try connection.reply())
        #expect(lap.errorName == "io.stopwatchd.InvalidTransition")
        #expect(lap.parameters["method"] == .string("Lap"))
        try connection.call("io.stopwatchd.Start")
        _ = try connection.reply()
        try connection.call("io.stopwatchd.Reset")
        let reset = try #require(try connection.reply())
        #expect(reset.errorName == "io.stopwatchd.InvalidTransition")
        #expect(reset.parameters["stopwatch"].flatMap { try? Stopwatch(json: $0) }?.state == .counting)
        #expect(reset.parameters["method"] == .string("Reset"))
    }

    @Test("errors: InvalidName, InvalidParameter, MethodNotFound, InterfaceNotFound, ExpectedMore, TooManyStopwatches")
    func errors() throws {
        let connection = try connect()
        let cases: [(method: String, parameters: String, error: String)] = [
            ("io.stopwatchd.Start", #"{"name":"no/slash"}"#, "io.stopwatchd.InvalidName"),
            ("io.stopwatchd.Start", #"{"name":""}"#, "io.stopwatchd.InvalidName"),
            ("io.stopwatchd.Get", #"{"name":"\#(String(repeating: "a", count: 65))"}"#, "io.stopwatchd.InvalidName"),
            ("io.stopwatchd.Start", #"{"name":5}"#, "org.varlink.service.InvalidParameter"),
            ("io.stopwatchd.Remove", #"{}"#, "org.varlink.service.InvalidParameter"),
            ("io.stopwatchd.Explode", #"{}"#, "org.varlink.service.MethodNotFound"),
            ("com.example.Nope", #"{}"#, "org.varlink.service.InterfaceNotFound"),
            ("io.stopwatchd.Watch", #"{}"#, "org.varlink.service.ExpectedMore"),
            ("org.varlink.service.GetInterfaceDescription", #"{"interface":"com.example"}"#, "org.varlink.service.InterfaceNotFound"),
        ]
        for (method, parameters, error) in cases {
            try connection.call(method, parameters)
            #expect(try connection.reply()?.errorName == error, "\(method) \(parameters)")
        }
        for name in ["one", "two", "three"] {
            try connection.call("io.stopwatchd.Start", #"{"name":"\#(name)"}"#)
            #expect(try connection.reply()?.errorName == nil)
        }
        try connection.call("io.stopwatchd.Start", #"{"name":"four"}"#)
        let refused = try #require(try connection.reply())
        #expect(refused.errorName == "io.stopwatchd.TooManyStopwatches")
        #expect(refused.parameters["limit"] == .int(3))
        // The connection survived every error.
        try connection.call("io.stopwatchd.Get", #"{"name":"one"}"#)
        #expect(try connection.reply()?.stopwatch?.state == .counting)
    }

    @Test("oneway calls get no reply but take effect")
    func oneway() throws {
        let connection = try connect()
        try connection.call("io.stopwatchd.Start", #"{"name":"quiet"}"#, oneway: true)
        try connection.call("io.stopwatchd.Get", #"{"name":"quiet"}"#)
        let reply = try #require(try connection.reply())
        #expect(reply.stopwatch?.name == "quiet")
        #expect(reply.stopwatch?.state == .counting)
    }

    @Test("org.varlink.service: GetInfo and the exact interface description")
    func serviceInterface() throws {
        let connection = try connect()
        try connection.call("org.varlink.service.GetInfo")
        let info = try #require(try connection.reply()).parameters
        #expect(info["product"] == .string("stopwatchd"))
        #expect(info["version"] == .string(Version.number))
        #expect(info["interfaces"] == .array([.string("org.varlink.service"), .string("io.stopwatchd")]))
        for key in ["vendor", "url"] {
            guard case .string(let value)? = info[key] else { Issue.record("GetInfo.\(key) missing"); continue }
            #expect(!value.isEmpty)
        }
        try connection.call("org.varlink.service.GetInterfaceDescription", #"{"interface":"io.stopwatchd"}"#)
        let description = try #require(try connection.reply()).parameters["description"]
        #expect(description == .string(SpecInterface.text))
        // Where the SPEC is beside the checkout, what is served is its IDL, exactly.
        if let spec = try? String(contentsOfFile: Self.specPath, encoding: .utf8) {
            let start = try #require(spec.range(of: "# Named stopwatches and countdowns kept by stopwatchd.\n"))
            let end = try #require(spec.range(of: "error ProtocolError (reason: string)", range: start.upperBound..<spec.endIndex))
            let specified = String(spec[start.lowerBound..<end.upperBound])
            #expect(specified == SpecInterface.text)
        }
    }

    static var specPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../shared/SPEC.md").path
    }

    @Test("Watch: the current state at once, then each change and each tick, all with continues")
    func watch() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "50ms"])
        let watcher = try RawConnection(daemon.socket)
        try watcher.call("io.stopwatchd.Watch", #"{"name":"later"}"#, more: true)
        let first = try #require(try watcher.reply())
        #expect(first["continues"] == .bool(true))
        #expect(first.stopwatch == Stopwatch(name: "later", state: .stopped, elapsedMs: 0))

        // Watching did not create it.
        _ = try StopwatchClient(socketPath: daemon.socket).start("other")
        #expect(try StopwatchClient(socketPath: daemon.socket).list().map(\.name) == ["other"])

        _ = try StopwatchClient(socketPath: daemon.socket).start("later")
        var counting: [Int64] = []
        while counting.count < 6, let reply = try watcher.reply() {
            #expect(reply["continues"] == .bool(true))
            if let stopwatch = reply.stopwatch, stopwatch.state == .counting { counting.append(stopwatch.elapsedMs) }
        }
        #expect(counting.count == 6)
        #expect(counting == counting.sorted())
        // After the start, each tick has crossed a new 50 ms boundary.
        let ticks = counting.dropFirst()
        #expect(zip(ticks, ticks.dropFirst()).allSatisfy { $0 / 50 < $1 / 50 })
        #expect(ticks.allSatisfy { $0 >= 50 })
        _ = try StopwatchClient(socketPath: daemon.socket).stop("later")
        let paused = try #require(try watcher.reply(where: { $0.stopwatch?.state == .pause }))
        #expect(paused.stopwatch?.elapsedMs ?? 0 >= counting.last ?? 0)
    }

    @Test("SIGTERM: the daemon exits 0 and removes its socket")
    func sigterm() throws {
        #expect(daemon.stop(SIGTERM) == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socket))
    }
}

extension RawConnection {
    func reply(timeout: Duration = .seconds(20), where condition: (JSONObject) -> Bool) throws -> JSONObject? {
        let end = ContinuousClock.now + timeout
        while let reply = try reply(timeout: end - ContinuousClock.now) {
            if condition(reply) { return reply }
        }
        return nil
    }
}
