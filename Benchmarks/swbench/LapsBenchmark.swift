import LinuxSystem
import StopwatchProtocol
import Varlink

/// The `laps` group: `Lap` on counting stopwatches that already hold 10, 1,000 and 10,000
/// laps, one call at a time over one connection, the three sizes in turn; the 10-lap
/// figure is the others' baseline (SPEC §7: "time per call, flat").
///
/// Each call adds a lap, so every size has stopwatches enough that none takes more than
/// 1% of its size in laps (10 laps: one call each; 1,000: ten; 10,000: a hundred), and
/// the daemon is started with `--max-laps` that much above 10,000. The stopwatches are
/// state files swbench writes before the daemon starts (`StopwatchRecord`, as the daemon
/// keeps them): the daemon restores them as its own.
///
/// Each stopwatch first takes `warmUpLaps` laps off the clock: swbench's files, as an
/// earlier release's, have no journal number, so a stopwatch's first write is its file
/// written whole (numbering a journal of its own), and its second makes the journal (a new
/// file: its directory flushed too). Those are once per stopwatch, whatever its laps;
/// timed, they would inflate the 10-lap baseline (one call per stopwatch) and hide how a
/// Lap's cost grows with the laps held.
enum LapsBenchmark {
    static let warmUpLaps = 2

    static func run(_ context: BenchContext) throws(BenchError) -> [Figure] {
        let plan = context.plan
        let sizes = plan.lapSizes
        let directory = try context.subdirectory("laps")
        let stateFiles = directory + "/state/stopwatches"
        let callsPerStopwatch = sizes.map { max($0 / 100, 1) }
        var names: [[String]] = []
        var fileBytes: [Int] = []
        for (size, calls) in zip(sizes, callsPerStopwatch) {
            let sizeNames = (0..<(plan.lapSamples + calls - 1) / calls).map { "laps\(size)-\($0)" }
            fileBytes.append(try StateFiles.writeCounting(sizeNames, laps: size, into: stateFiles))
            names.append(sizeNames)
        }
        let maximumLaps = zip(sizes, callsPerStopwatch).map { $0 + $1 + warmUpLaps }.max() ?? 10_000
        let stopwatches = names.map(\.count).reduce(0, +)
        context.progress("Lap on \(sizes.map { NumberText.string(Double($0)) }.joined(separator: ", ")) laps, \(plan.lapSamples) calls each (\(stopwatches) stopwatches, --max-laps \(maximumLaps))")
        let daemon = try context.startDaemon("laps", arguments: [
            "--max-laps", "\(maximumLaps)", "--max-stopwatches", "\(max(stopwatches, 10_000))",
        ])
        defer { daemon.stop() }
        let connection = try daemon.connect()
        defer { connection.close() }
        for (size, sizeNames) in zip(sizes, names) {
            let restored = try connection.stopwatch(.stopwatchd("Get", name: sizeNames[0]))
            guard restored.state == .counting, restored.lapsMs.count == size else {
                throw BenchError("\(sizeNames[0]) was restored \(restored.state.rawValue) with \(restored.lapsMs.count) laps, not counting with \(size)")
            }
        }

        let requests = names.map { $0.map { VarlinkCall.stopwatchd("Lap", name: $0).message } }
        for (index, sizeRequests) in requests.enumerated() {
            for (stopwatch, request) in sizeRequests.enumerated() {
                for _ in 0..<warmUpLaps {
                    do {
                        try connection.send(request)
                        let reply = try connection.receive()
                        guard !reply.starts(with: #"{"error""#.utf8) else { throw BenchError("replied \(String(decoding: reply, as: UTF8.self))") }
                    } catch {
                        throw BenchError("a warm-up Lap on \(names[index][stopwatch]) failed: \(error)")
                    }
                }
            }
        }
        var times = sizes.map { _ in Samples() }
        var replyBytes = sizes.map { _ in (minimum: Int.max, maximum: 0) }
        var lastReplies = sizes.map { _ in [UInt8]() }
        for sample in 0..<plan.lapSamples {
            for index in sizes.indices {
                let stopwatch = sample / callsPerStopwatch[index]
                let start = Now.boot()
                let reply: [UInt8]
                do {
                    try connection.send(requests[index][stopwatch])
                    reply = try connection.receive()
                } catch {
                    throw BenchError("a Lap failed: \(error)")
                }
                times[index].append((Now.boot() - start).inMilliseconds)
                replyBytes[index] = (min(replyBytes[index].minimum, reply.count + 1), max(replyBytes[index].maximum, reply.count + 1))
                lastReplies[index] = reply
                // Off the clock: every reply is not an error; the last on each stopwatch
                // holds every lap taken.
                guard !reply.starts(with: #"{"error""#.utf8) else {
                    throw BenchError("Lap on \(names[index][stopwatch]) replied \(String(decoding: reply, as: UTF8.self))")
                }
                if (sample + 1) % callsPerStopwatch[index] == 0 || sample == plan.lapSamples - 1 {
                    try checkLaps(reply, count: sizes[index] + warmUpLaps + sample % callsPerStopwatch[index] + 1, of: names[index][stopwatch])
                }
            }
        }

        context.progress("what a 10,000-lap Lap cannot avoid: echo of its reply size, its reply written, and a file of its size replaced (\(plan.lapFloorSamples) each)")
        let smallest = sizes.startIndex, largest = sizes.index(before: sizes.endIndex)
        let floorDirectory = try context.subdirectory("laps-floor")
        let echo = try LapFloors.echoRoundTrips(
            request: requests[largest][0], replySizes: [replyBytes[smallest].maximum, replyBytes[largest].maximum],
            samples: plan.lapFloorSamples, directory: floorDirectory
        )
        let files = try LapFloors.fileReplacements(
            sizes: [fileBytes[smallest], fileBytes[largest]], samples: plan.lapFloorSamples, neighbours: stopwatches,
            directory: floorDirectory
        )

        // Writing the reply, in this process with the daemon's writer: the part of a Lap that
        // grows with its laps, as the IDL's reply holds every one.
        var writes: [Samples] = []
        for index in [smallest, largest] {
            guard let json = try? JSONParser.parse(lastReplies[index]), let parsed = try? VarlinkReply(json: json),
                let value = parsed.parameters["stopwatch"], let stopwatch = try? Stopwatch(json: value)
            else { throw BenchError("the last Lap's reply of \(sizes[index]) laps does not read back") }
            var samples = Samples()
            for _ in 0..<plan.lapFloorSamples {
                let start = Now.boot()
                let message = stopwatch.getReplyMessage
                samples.append((Now.boot() - start).inMilliseconds)
                guard message.count > 1 else { throw BenchError("an empty reply written") }
            }
            writes.append(samples)
        }

        let kinds: [FigureKind] = [.lapAt10, .lapAt1000, .lapAt10000]
        let baseline = times[smallest].median()
        return sizes.indices.map { index in
            var details: JSONObject = [
                "samples": .int(Int64(times[index].count)),
                "p99_ms": JSONReport.number(times[index].p99() ?? 0),
                "max_ms": JSONReport.number(times[index].maximum ?? 0),
                "laps_held_at_the_call": .string("\(sizes[index] + warmUpLaps) to \(sizes[index] + warmUpLaps + callsPerStopwatch[index] - 1)"),
                "warm_up_laps_per_stopwatch": .int(Int64(warmUpLaps)),
                "stopwatches": .int(Int64(names[index].count)),
                "reply_bytes_min": .int(Int64(replyBytes[index].minimum)),
                "reply_bytes_max": .int(Int64(replyBytes[index].maximum)),
                "state_file_bytes": .int(Int64(fileBytes[index])),
                "max_laps_option": .int(Int64(maximumLaps)),
            ]
            if index == largest {
                var echoSmall = echo[0], echoLarge = echo[1], fileSmall = files[0], fileLarge = files[1]
                details["floor_echo_p50_ms"] = .object([
                    "reply_bytes_\(replyBytes[smallest].maximum)": JSONReport.number(echoSmall.median() ?? 0),
                    "reply_bytes_\(replyBytes[largest].maximum)": JSONReport.number(echoLarge.median() ?? 0),
                ])
                details["floor_file_replace_p50_ms"] = .object([
                    "file_bytes_\(fileBytes[smallest])": JSONReport.number(fileSmall.median() ?? 0),
                    "file_bytes_\(fileBytes[largest])": JSONReport.number(fileLarge.median() ?? 0),
                ])
                var writeSmall = writes[0], writeLarge = writes[1]
                // Keyed by the size of the reply written (the last Lap's, its NUL included).
                details["floor_reply_write_p50_ms"] = .object([
                    "reply_bytes_\(lastReplies[smallest].count + 1)": JSONReport.number(writeSmall.median() ?? 0),
                    "reply_bytes_\(lastReplies[largest].count + 1)": JSONReport.number(writeLarge.median() ?? 0),
                ])
                details["floor_samples"] = .int(Int64(plan.lapFloorSamples))
                details["floor_directory_files"] = .int(Int64(stopwatches))
            }
            return Figure(kinds[index], value: times[index].median() ?? 0, baseline: index == smallest ? nil : baseline, details: details)
        }
    }

    /// Throws unless `reply` is a stopwatch holding `count` laps.
    private static func checkLaps(_ reply: [UInt8], count: Int, of name: String) throws(BenchError) {
        guard let json = try? JSONParser.parse(reply), let parsed = try? VarlinkReply(json: json), parsed.error == nil,
            let value = parsed.parameters["stopwatch"], let stopwatch = try? Stopwatch(json: value)
        else {
            throw BenchError("Lap on \(name) replied \(String(decoding: reply.prefix(200), as: UTF8.self))")
        }
        guard stopwatch.lapsMs.count == count else {
            throw BenchError("Lap on \(name) replied \(stopwatch.lapsMs.count) laps, not \(count)")
        }
    }
}
