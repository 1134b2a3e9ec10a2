import Varlink

/// The `calls` group: a daemon with one counting stopwatch, and the C echo server in a
/// process of its own answering with replies of exactly the size of the daemon's.
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
        let callFigures: [Figure]
        do throws(BenchError) {
            callFigures = try measureCalls(context, daemon: daemon, control: control, request: request, replySize: replySize)
        } catch {
            // Without their baseline these are not measured; swctl's figure stands.
            context.progress("Get round trip and throughput not measured: \(error)")
            callFigures = [.getRoundTrip, .getRoundTripUnpinned, .throughput, .getCPU].map { Figure($0, failure: error.description) }
        }

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
        return callFigures + [swctl]
    }

    /// Round trip and throughput against the C echo, built and started here.
    private static func measureCalls(
        _ context: BenchContext, daemon: DaemonUnderTest, control: MessageConnection, request: [UInt8], replySize: Int
    ) throws(BenchError) -> [Figure] {
        let directory = try context.subdirectory("echo")
        let echoProgram = try CClient.build(.echo, sourceOption: context.options.cClientSource, into: directory)
        let echo = try EchoProcess(program: echoProgram, path: directory + "/echo.sock", replySize: replySize, log: directory + "/echo.log")
        defer { echo.stop() }

        context.progress("Get round trip against the C echo (\(echoProgram.isStatic ? "static" : "dynamic"); \(request.count)-byte request, \(replySize)-byte reply), pinned to one CPU and not")
        let echoConnection: MessageConnection
        do {
            echoConnection = try MessageConnection(path: echo.path)
        } catch {
            throw BenchError("cannot connect to the C echo server: \(error)")
        }
        defer { echoConnection.close() }
        var roundTrips = try RoundTripMeasurement.run(
            daemon: control, daemonPID: daemon.pid, echo: echoConnection, echoPID: echo.pid, request: request, plan: context.plan
        )
        roundTrips[0].details["reply_bytes"] = .int(Int64(replySize))
        roundTrips[0].details["echo_static"] = .bool(echoProgram.isStatic)

        context.progress("Get throughput, \(context.plan.throughputClients) clients, against the C echo, and each one's CPU time per call")
        let throughput = try ThroughputMeasurement.run(
            daemon: .init(path: daemon.socketPath, pid: daemon.pid), echo: .init(path: echo.path, pid: echo.pid), request: request,
            plan: context.plan
        )
        try echo.checkServing()
        return roundTrips + throughput
    }
}
