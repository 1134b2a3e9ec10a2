import StopwatchProtocol
import Varlink

/// What a fan-out delivered, tick by tick: which ticks reached which watchers, how long
/// after its boundary each arrived, and how far each tick's elapsed time was from it.
///
/// Tick k's boundary is `origin + k·tick`; a message counting `elapsed_ms` belongs to tick
/// `elapsed_ms / tick` (ticks are never early, so this is the tick it was sent for). The
/// message of the start itself (elapsed 0) and the first state of each watch are not ticks.
struct TickStatistics {
    let expected: Int
    private(set) var delivered = 0
    private(set) var duplicates = 0
    private(set) var unreadable = 0
    /// Receipt minus boundary, in milliseconds.
    var delays = Samples()
    /// Elapsed time in the tick minus the boundary's, in milliseconds.
    var accuracy = Samples()
    /// The longest delay of each tick (1…ticks), in milliseconds: one slow tick shows here.
    private(set) var slowestDelayOfTick: [Double]
    /// The shortest delay of each tick (1…ticks), in milliseconds (infinite for a tick no
    /// watcher got): the first receipt, an upper bound on when the tick left, which its
    /// `elapsed_ms` (whole milliseconds) cannot tell to the microsecond.
    private(set) var earliestDelayOfTick: [Double]

    init(_ deliveries: [Delivery], watchers: Int, ticks: Int, tick: Duration, origin: Duration) {
        expected = watchers * ticks
        slowestDelayOfTick = [Double](repeating: 0, count: ticks)
        earliestDelayOfTick = [Double](repeating: .infinity, count: ticks)
        let tickMs = tick.milliseconds
        var seen = [Bool](repeating: false, count: watchers * (ticks + 1))
        for delivery in deliveries {
            guard let stopwatch = Self.stopwatch(in: delivery.message) else {
                unreadable += 1
                continue
            }
            guard stopwatch.state == .counting, stopwatch.elapsedMs >= tickMs else { continue }
            let k = Int(stopwatch.elapsedMs / tickMs)
            guard k <= ticks else { continue }
            let slot = delivery.watcher * (ticks + 1) + k
            guard !seen[slot] else {
                duplicates += 1
                continue
            }
            seen[slot] = true
            delivered += 1
            let delay = (delivery.received - (origin + tick * k)).inMilliseconds
            delays.append(delay)
            if k >= 1 {
                slowestDelayOfTick[k - 1] = max(slowestDelayOfTick[k - 1], delay)
                earliestDelayOfTick[k - 1] = min(earliestDelayOfTick[k - 1], delay)
            }
            accuracy.append(Double(stopwatch.elapsedMs - Int64(k) * tickMs))
        }
    }

    /// Each tick's first receipt after its boundary, in microseconds: the tick accuracy
    /// (issue 30: in microseconds, where `elapsed_ms − boundary` is whole milliseconds).
    var firstReceiptDelays: Samples {
        var samples = Samples()
        for delay in earliestDelayOfTick where delay.isFinite { samples.append(delay * 1_000) }
        return samples
    }

    var deliveredPercent: Double {
        expected == 0 ? 0 : Double(delivered) / Double(expected) * 100
    }

    private static func stopwatch(in message: [UInt8]) -> Stopwatch? {
        guard let json = try? JSONParser.parse(message), let reply = try? VarlinkReply(json: json),
            let stopwatch = reply.parameters["stopwatch"]
        else { return nil }
        return try? Stopwatch(json: stopwatch)
    }

    /// The counts and percentiles, for the JSON report.
    mutating func details() -> JSONObject {
        [
            "expected": .int(Int64(expected)),
            "delivered": .int(Int64(delivered)),
            "duplicates": .int(Int64(duplicates)),
            "unreadable": .int(Int64(unreadable)),
            "delay_p50_ms": JSONReport.number(delays.median() ?? 0),
            "delay_p99_ms": JSONReport.number(delays.p99() ?? 0),
            "delay_max_ms": JSONReport.number(delays.maximum ?? 0),
            "accuracy_p50_ms": JSONReport.number(accuracy.median() ?? 0),
            "accuracy_p99_ms": JSONReport.number(accuracy.p99() ?? 0),
            "accuracy_min_ms": JSONReport.number(accuracy.minimum ?? 0),
            "accuracy_max_ms": JSONReport.number(accuracy.maximum ?? 0),
            "delay_max_ms_by_tick": .array(slowestDelayOfTick.map { JSONReport.number($0) }),
        ]
    }
}
