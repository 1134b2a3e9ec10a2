import StopwatchProtocol
import StopwatchdClient

/// One reading of `History`, a batch at a time: `next()` gives the next batch (nil after the
/// last), and the reader calls `close()` however the reading ends, early or with an error.
/// What `LatestIntervalSearch` and `LogTable` read: a `HistoryStream`, or a test's history.
package struct HistoryReading {
    package let next: () throws(ClientError) -> [Interval]?
    package let close: () -> Void

    package init(next: @escaping () throws(ClientError) -> [Interval]?, close: @escaping () -> Void) {
        self.next = next
        self.close = close
    }

    /// A reading of `stream`.
    init(_ stream: HistoryStream) {
        self.init(next: { () throws(ClientError) in try stream.next() }, close: { stream.close() })
    }
}
