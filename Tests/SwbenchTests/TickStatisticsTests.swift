import Testing

@testable import swbench

/// Tick accuracy in microseconds: each tick's first receipt after its boundary, where the
/// tick's own `elapsed_ms` is whole milliseconds.
struct TickStatisticsTests {
    private func tick(_ elapsedMs: Int, watcher: Int, receivedAt: Duration) -> Delivery {
        let message = #"{"parameters":{"stopwatch":{"name":"t","state":"counting","elapsed_ms":\#(elapsedMs),"laps_ms":[]}}}"#
        return Delivery(watcher: watcher, received: receivedAt, message: Array(message.utf8))
    }

    @Test func eachTicksFirstReceiptInMicroseconds() {
        let origin = Duration.seconds(100)
        let deliveries = [
            // Tick 1 (boundary origin + 1 s): received 250 µs and 900 µs after it.
            tick(1_000, watcher: 0, receivedAt: origin + .microseconds(1_000_900)),
            tick(1_000, watcher: 1, receivedAt: origin + .microseconds(1_000_250)),
            // Tick 2: received 1,500 µs after it (elapsed read 1 ms late) and 1,700.
            tick(2_001, watcher: 0, receivedAt: origin + .microseconds(2_001_500)),
            tick(2_001, watcher: 1, receivedAt: origin + .microseconds(2_001_700)),
        ]
        let statistics = TickStatistics(deliveries, watchers: 2, ticks: 3, tick: .seconds(1), origin: origin)
        var first = statistics.firstReceiptDelays
        #expect(statistics.delivered == 4)
        // Tick 3 reached no one: not a receipt.
        #expect(first.count == 2)
        #expect(abs((first.minimum ?? 0) - 250) < 0.01)
        #expect(abs((first.p99() ?? 0) - 1_500) < 0.01)
        #expect(statistics.accuracy.maximum == 1)
    }
}
