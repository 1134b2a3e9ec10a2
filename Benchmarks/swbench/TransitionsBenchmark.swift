import Glibc
import LinuxSystem
import Varlink

/// The `transitions` group: what a Start, a Lap and a Stop cost against the floor of a
/// durable transition, one small append with `fdatasync` to a file on the same file system
/// (SPEC §7, issue 30). Stopwatches are made and stopped first, off the clock; then, in
/// turn on each, a Start, a Lap and a Stop are timed from the call to its reply (each is
/// durable before its reply, SPEC §4), each followed by one timed append of the floor, so
/// that a change in the machine's load falls on both. The daemon runs with its state and
/// history where the floor's file is, one connection, one call at a time.
enum TransitionsBenchmark {
    /// A transition line's size: a stopwatch's state without its laps is about this long.
    static let floorLineBytes = 160

    static func run(_ context: BenchContext) throws(BenchError) -> [Figure] {
        let plan = context.plan
        let names = (0..<plan.transitionSamples).map { "transition\($0)" }
        let daemon = try context.startDaemon("transitions", arguments: ["--max-stopwatches", "\(max(names.count, 10_000))"])
        defer { daemon.stop() }
        let connection = try daemon.connect()
        defer { connection.close() }
        context.progress("Start, Lap and Stop, \(names.count) each, against one \(floorLineBytes)-byte append with fdatasync after each")
        for name in names {
            _ = try connection.stopwatch(.stopwatchd("Start", name: name))
            _ = try connection.stopwatch(.stopwatchd("Stop", name: name))
        }
        let floor = try DurableWriteCost.AppendFloor(
            path: try context.subdirectory("transitions-floor") + "/floor.jsonl", bytes: floorLineBytes
        )
        defer { floor.close() }

        let methods = ["Start", "Lap", "Stop"]
        var times = methods.map { _ in Samples() }, floorTimes = Samples()
        for name in names {
            for (index, method) in methods.enumerated() {
                let request = VarlinkCall.stopwatchd(method, name: name).message
                let start = Now.boot()
                let reply = try connection.roundTrip(request)
                times[index].append((Now.boot() - start).inMilliseconds)
                // Off the clock: a refusal is not a transition.
                guard !reply.starts(with: #"{"error""#.utf8) else {
                    throw BenchError("\(method) on \(name) replied \(String(decoding: reply.prefix(200), as: UTF8.self))")
                }
                floorTimes.append(try floor.append().inMilliseconds)
            }
        }
        let floorMedian = floorTimes.median()
        let kinds: [FigureKind] = [.startCost, .lapCost, .stopCost]
        return methods.indices.map { index in
            Figure(kinds[index], value: times[index].median() ?? 0, baseline: floorMedian, details: [
                "samples": .int(Int64(times[index].count)),
                "p99_ms": JSONReport.number(times[index].p99() ?? 0),
                "floor_samples": .int(Int64(floorTimes.count)),
                "floor_p99_ms": JSONReport.number(floorTimes.p99() ?? 0),
                "floor_line_bytes": .int(Int64(floorLineBytes)),
            ])
        }
    }
}
