import Varlink

/// The `calls` group: a daemon with one counting stopwatch, and the echo server answering
/// with replies of exactly the size of the daemon's.
enum CallsBenchmark {
    static func run(_ context: BenchContext) throws(BenchError) -> [Figure] {
        let daemon = try context.startDaemon("calls")
        defer { daemon.stop() }
        let name = "bench"
        let control = try daemon.connect()
        defer { control.close() }
        _ = try control.stopwatch(.stopwatchd("Start", name: name))
        let request = VarlinkCall.stopwatchd("Get", name: name).message
        let replySize = try control.roundTrip(request).count + 1
        let echoPath = try context.subdirectory("echo") + "/echo.sock"
        let echo: EchoServer
        do {
            echo = try EchoServer(path: echoPath, replySize: replySize)
        } catch {
            throw BenchError("cannot start the echo server at \(echoPath): \(error)")
        }
        defer { echo.stop() }

        context.progress("Get round trip against echo (\(request.count)-byte request, \(replySize)-byte reply)")
        let echoConnection: MessageConnection
        do {
            echoConnection = try MessageConnection(path: echoPath)
        } catch {
            throw BenchError("cannot connect to the echo server: \(error)")
        }
        defer { echoConnection.close() }
        var roundTrip = try RoundTripMeasurement.run(daemon: control, echo: echoConnection, request: request, plan: context.plan)
        roundTrip.details["reply_bytes"] = .int(Int64(replySize))

        context.progress("Get throughput, \(context.plan.throughputClients) clients, against echo")
        let throughput = try ThroughputMeasurement.run(daemonPath: daemon.socketPath, echoPath: echoPath, request: request, plan: context.plan)

        let swctl: Figure
        do throws(BenchError) {
            let directory = try context.subdirectory("c-client")
            let client = try CClient.build(sourceOption: context.options.cClientSource, into: directory)
            context.progress("swctl status against the C client (\(client.isStatic ? "static" : "dynamic")) and /bin/true, \(context.plan.processRuns) runs each")
            swctl = try SwctlMeasurement.run(
                swctlPath: context.options.swctlPath, client: client, socketPath: daemon.socketPath, name: name, plan: context.plan,
                directory: directory
            )
        } catch {
            // Without its baseline the figure is not measured; the others stand.
            context.progress("swctl status not measured: \(error)")
            swctl = Figure(.swctlStatus, failure: error.description)
        }
        return [roundTrip, throughput, swctl]
    }
}
