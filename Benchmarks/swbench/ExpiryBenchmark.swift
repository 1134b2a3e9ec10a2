import StopwatchProtocol
import Varlink

/// The `expiry` and `phase` groups (SPEC §7): countdowns expiring at distinct instants, or
/// automatic cycles whose first phases end at distinct instants, each watched; the delay
/// from each instant to the receipt of its `expired` (or `phase`) reply, against a raw
/// fan-out writing to as many sockets at the same instants from a process of its own, and
/// beside it from a thread in swbench (`RawExpiries`).
enum ExpiryBenchmark {
    static func run(_ context: BenchContext, _ kind: ExpiringStopwatches) throws(BenchError) -> [Figure] {
        let plan = context.plan
        let count = kind.count(in: plan)
        // The baseline judged: the raw sender in a process of its own, as the daemon is;
        // the thread in swbench beside it. Without the program (no C compiler) the figure is
        // not measured, as swctl status's is not without its C client: built first, so that
        // a failure does not throw away the daemon's run.
        let directory = try context.subdirectory("raw-fanout-\(kind.group)")
        let program = try CClient.build(.rawFanOut, sourceOption: context.options.cClientSource, into: directory)
        context.progress("\(kind.group): \(count) watched \(kind.noun) ending \(DurationText.string(kind.spacing(in: plan))) apart")
        var daemon = try DaemonExpiries.run(context, kind)
        var details: JSONObject = [
            kind.noun: .int(Int64(count)),
            "received": .int(Int64(daemon.delays.count)),
            "daemon_p50_ms": JSONReport.number(daemon.delays.median() ?? .infinity),
            "daemon_max_ms": JSONReport.number(daemon.delays.maximum ?? .infinity),
            "raw_process_static": .bool(program.isStatic),
        ]
        // Always the process first, then the thread, each once.
        context.progress("\(kind.group) baseline: a raw process writing at the same instants")
        var raw = try RawExpiries.run(kind, instants: daemon.instants, targets: daemon.targets, sender: .process(program, directory: directory))
        details["raw_p50_ms"] = JSONReport.number(raw.median() ?? .infinity)
        details["raw_p99_ms"] = JSONReport.number(raw.p99() ?? .infinity)
        details["raw_max_ms"] = JSONReport.number(raw.maximum ?? .infinity)
        details["raw_received"] = .int(Int64(raw.count))
        context.progress("\(kind.group) beside it: a raw thread in swbench writing at the same instants")
        do throws(BenchError) {
            var thread = try RawExpiries.run(kind, instants: daemon.instants, targets: daemon.targets, sender: .thread)
            details["raw_thread_p50_ms"] = JSONReport.number(thread.median() ?? .infinity)
            details["raw_thread_p99_ms"] = JSONReport.number(thread.p99() ?? .infinity)
            details["raw_thread_max_ms"] = JSONReport.number(thread.maximum ?? .infinity)
            details["raw_thread_received"] = .int(Int64(thread.count))
        } catch {
            // Not judged: its failure is told, and the figure stands on the process's.
            context.progress("\(kind.group): the raw thread failed: \(error)")
            details["raw_thread_error"] = .string(error.description)
        }
        if kind.appendsToHistory {
            // Each phase change appends its interval to the history and flushes it (on the
            // durable writer, after telling): that flush on this file system, timed apart,
            // is the change's floor.
            context.progress("phase floor: a history line appended with fdatasync, as often")
            var flush = try DurableWriteCost.appendTimes(
                count: count, in: daemon.stateDirectory, bytes: 160, spacing: kind.spacing(in: plan)
            )
            details["append_fdatasync_p50_ms"] = JSONReport.number(flush.median() ?? .infinity)
            details["append_fdatasync_p99_ms"] = JSONReport.number(flush.p99() ?? .infinity)
            details["append_fdatasync_max_ms"] = JSONReport.number(flush.maximum ?? .infinity)
        }
        // One whose reply never came counts as infinitely late.
        let missing = count - daemon.delays.count
        return [Figure(
            kind.figure,
            value: missing > 0 ? .infinity : daemon.delays.p99() ?? .infinity,
            baseline: raw.p99(),
            details: details,
            otherConditionsMet: missing == 0
        )]
    }
}
