import StopwatchProtocol
import Varlink

/// The replies of one `History` call, a batch at a time (blocking): the counting intervals
/// oldest first (in the order they ended), the still counting ones last, without an end.
/// Only the batch being read is in memory, however long the history.
///
/// The connection closes after the last batch, on an error, or on `close()`.
public final class HistoryStream {
    private let connection: VarlinkConnection
    private var finished = false
    /// The names `nextTimes` numbered, in this stream.
    package private(set) var names = NameTable()

    package init(connection: VarlinkConnection) {
        self.connection = connection
    }

    /// The next batch (at most 10,000 intervals, maybe none), or nil once the last reply has
    /// been read. Throws when the daemon goes away, refuses the call, or sends something
    /// that is not an interval.
    public func next() throws(ClientError) -> [Interval]? {
        guard !finished else { return nil }
        do {
            let message = try connection.receiveMessage()
            if let (intervals, continues) = HistoryReplyScanner.scan(message) {
                if !continues { finish() }
                return intervals
            }
            let reply = try connection.decode(message)
            if !reply.continues { finish() }
            return try Self.intervals(in: reply, from: connection)
        } catch {
            finish()
            throw error
        }
    }

    /// The next batch as `next()` gives it, each interval as its times, its name numbered in
    /// `names`: for a reader that adds up time and needs no id, note, device or string.
    package func nextTimes() throws(ClientError) -> [IntervalTimes]? {
        guard !finished else { return nil }
        do {
            let message = try connection.receiveMessage()
            if let (times, continues) = HistoryReplyScanner.scanTimes(message, names: &names) {
                if !continues { finish() }
                return times
            }
            let reply = try connection.decode(message)
            if !reply.continues { finish() }
            return try Self.intervals(in: reply, from: connection).map { interval in
                IntervalTimes(nameNumber: names.number(of: interval.name), startMs: interval.startMs, endMs: interval.endMs, elapsedMs: interval.elapsedMs)
            }
        } catch {
            finish()
            throw error
        }
    }

    /// Stops reading and closes the connection; `next()` then returns nil.
    public func close() {
        finish()
    }

    deinit {
        connection.close()
    }

    private func finish() {
        finished = true
        connection.close()
    }

    private static func intervals(in reply: VarlinkReply, from connection: VarlinkConnection) throws(ClientError) -> [Interval] {
        let parameters: JSONObject
        do {
            parameters = try reply.result(from: connection)
        } catch .refused(let name, _) where name == "org.varlink.service.MethodNotFound" {
            // The only method a current client may find missing is the newest one.
            throw .refused(errorName: name, explanation: "this stopwatchd is too old for history; upgrade it")
        }
        guard case .array(let items)? = parameters["intervals"] else {
            throw .protocolViolation("History replied without intervals")
        }
        var intervals: [Interval] = []
        intervals.reserveCapacity(items.count)
        for item in items {
            do {
                intervals.append(try Interval(json: item))
            } catch {
                throw .protocolViolation(error.reason)
            }
        }
        return intervals
    }
}
