import Dispatch
import LinuxSystem
import StopwatchProtocol
import Varlink

/// One `History` call's replies: the journal's intervals that match, month after month,
/// then those not written yet and those still counting, oldest first.
///
/// Cooperative, so that a history of millions of lines never holds the serving queue: each
/// turn of the queue reads at most `linesPerTurn` lines (through a fixed 64 KiB buffer)
/// and then queues the next turn, so ticks and other clients are served between. A batch
/// of `batchSize` intervals is encoded straight to bytes once one more match is known (the
/// look-ahead that says whether it is the last), and reading pauses until the connection
/// has pulled it: a slow reader holds at most one batch, and memory does not grow with the
/// history.
///
/// Without `more`, only one reply may be sent: the intervals, or `TooManyResults` as soon
/// as there are more than `batchSize`.
///
/// Not thread-safe: it belongs to the server's queue.
// Unchecked Sendable, so that its next turn can be queued: every stored property is used
// only on `queue` (serial), where the connection calls it and where its turns run.
final class HistoryStream: VarlinkReplyStream, @unchecked Sendable {
    static let bufferSize = 64 * 1024
    /// A line longer than this is not an interval: skipped whole, without keeping it.
    static let maximumLineLength = 64 * 1024

    private let query: HistoryQuery
    private let more: Bool
    private let journal: HistoryJournal
    private let queue: DispatchQueue
    private let batchSize: Int
    private let linesPerTurn: Int
    private var months: ArraySlice<(month: HistoryMonth, size: Int64)>
    /// What comes after the files: intervals not written yet, then the open ones.
    private var tail: [Interval]

    private var reading: (month: HistoryMonth, file: FileDescriptor, size: Int64)?
    private var offset: Int64 = 0
    private var buffer: UnsafeMutableRawBufferPointer
    /// The start of a line whose end is in the next chunk.
    private var partialLine: [UInt8] = []
    private var skippingLongLine = false
    private var badLines = 0
    private var earliestStart: Int64?

    private var matches: [Interval] = []
    /// Why the call fails: a month that cannot be read (`HistoryJournal.readFailure`).
    private var failure: VarlinkError?
    private var outgoing: VarlinkStreamItem?
    private var isFinished = false
    private var isWorking = false
    private var ready: (() -> Void)?

    init(
        query: HistoryQuery,
        more: Bool,
        journal: HistoryJournal,
        queue: DispatchQueue,
        tail: [Interval],
        batchSize: Int,
        linesPerTurn: Int = 10_000
    ) {
        self.query = query
        self.more = more
        self.journal = journal
        self.queue = queue
        self.tail = tail
        self.batchSize = max(batchSize, 1)
        self.linesPerTurn = max(linesPerTurn, 1)
        do throws(VarlinkError) {
            months = try journal.monthsToRead()[...]
        } catch {
            months = []
            failure = error
        }
        buffer = .allocate(byteCount: Self.bufferSize, alignment: 16)
    }

    deinit {
        reading?.file.close()
        buffer.deallocate()
    }

    /// Ends by itself: answers a call without `more` too (exactly one `.last`), and calls
    /// pipelined behind it wait for its end.
    var isFinite: Bool { true }

    func start(ready: @escaping () -> Void) {
        self.ready = ready
        scheduleWork()
    }

    func next() -> VarlinkStreamItem? {
        guard let item = outgoing else { return nil }
        outgoing = nil
        if !isFinished { scheduleWork() }
        return item
    }

    func takeEnd() -> VarlinkError? { nil }

    func cancel() {
        ready = nil
        isFinished = true
        reading?.file.close()
        reading = nil
        matches = []
        tail = []
    }

    private func scheduleWork() {
        guard !isWorking else { return }
        isWorking = true
        queue.async { [weak self] in self?.work() }
    }

    /// One turn: reads until a reply is ready or `linesPerTurn` lines are read.
    private func work() {
        isWorking = false
        guard ready != nil, outgoing == nil, !isFinished else { return }
        var lines = 0
        while lines < linesPerTurn {
            if let item = replyIfReady() {
                outgoing = item
                ready?()
                return
            }
            guard let read = readSome(atMost: linesPerTurn - lines) else {
                finish()
                return
            }
            lines += max(read, 1)
        }
        scheduleWork()
    }

    /// A batch to send now, if one is known to be neither too many nor the last.
    private func replyIfReady() -> VarlinkStreamItem? {
        guard matches.count > batchSize else { return nil }
        guard more else {
            isFinished = true
            closeReading()
            return .last(VarlinkReply(.tooManyResults(limit: batchSize)).message)
        }
        let batch = matches[..<batchSize]
        let message = Self.message(batch, continues: true)
        matches.removeFirst(batchSize)
        return .message(message)
    }

    private func finish() {
        isFinished = true
        if let failure {
            // Not what was read as if it were all: the call fails, and says why.
            matches = []
            tail = []
            outgoing = .end(failure)
            ready?()
            return
        }
        matches += tail.filter(query.matches)
        tail = []
        if let item = replyIfReady() {
            // More than a batch came with the tail: this one, and the rest at the next pull.
            isFinished = !more
            outgoing = item
        } else {
            outgoing = .last(Self.message(matches[...], continues: false))
            matches = []
        }
        ready?()
    }

    /// Reads lines of the current month (opening the next one as needed); the work done, in
    /// lines (or in bytes / 64, when that is more), or nil once every month is read.
    private func readSome(atMost limit: Int) -> Int? {
        guard let reading = reading ?? openNextMonth() else { return nil }
        let remaining = reading.size - offset
        guard remaining > 0 else {
            endOfMonth(whole: true)
            return 0
        }
        let length = Int(min(Int64(Self.bufferSize), remaining))
        let count: Int
        do throws(Errno) {
            count = try reading.file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length]), at: offset)
        } catch {
            failure = journal.readFailure(reading.month, error)
            closeReading()
            return nil
        }
        guard count > 0 else {
            // Shorter than it was when listed: cut meanwhile; read what there was.
            endOfMonth(whole: false)
            return 0
        }
        // Only whole lines are taken from this chunk, up to `limit`; the rest is read again.
        var lines = 0
        var lineStart = 0
        var index = 0
        let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
        while index < count, lines < limit {
            guard let newline = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: chunk, from: index) else { break }
            line(UnsafeRawBufferPointer(rebasing: chunk[lineStart..<newline]))
            lines += 1
            index = newline + 1
            lineStart = index
        }
        if lines < limit, lineStart < count {
            // The end of the chunk is the start of a line that goes on in the next one.
            if !skippingLongLine {
                partialLine.append(contentsOf: chunk[lineStart..<count])
                if partialLine.count > Self.maximumLineLength {
                    partialLine = []
                    skippingLongLine = true
                }
            }
            lineStart = count
        }
        offset += Int64(lineStart)
        // Bytes count too, a line per 64 of them: a month of megabytes without a newline
        // (garbage, zeros after a crash) must not hold one turn for seconds.
        return max(lines, count / 64)
    }

    private func line(_ bytes: UnsafeRawBufferPointer) {
        if skippingLongLine {
            skippingLongLine = false
            badLines += 1
            return
        }
        // A line of the daemon's own shape that ended before `since` cannot match: passed
        // over by its times alone, its start still counted for the month's earliest (a line
        // damaged elsewhere is then not noticed by this call, only by one that reads it).
        if partialLine.isEmpty, let since = query.since, let times = HistoryLine.plainStartAndEnd(bytes),
            times.end < since, times.start <= times.end
        {
            earliestStart = min(earliestStart ?? times.start, times.start)
            return
        }
        let interval: Interval?
        let isEmpty = bytes.isEmpty && partialLine.isEmpty
        if partialLine.isEmpty {
            interval = HistoryLine.parse(bytes)
        } else {
            partialLine.append(contentsOf: bytes)
            interval = partialLine.withUnsafeBytes { HistoryLine.parse($0) }
            partialLine = []
        }
        guard let interval else {
            if !isEmpty { badLines += 1 }
            return
        }
        earliestStart = min(earliestStart ?? interval.startMs, interval.startMs)
        if query.matches(interval) { matches.append(interval) }
    }

    private func openNextMonth() -> (month: HistoryMonth, file: FileDescriptor, size: Int64)? {
        while let (month, size) = months.popFirst() {
            guard query.mayMatch(month, earliestStart: journal.earliestStart(of: month)) else { continue }
            let opened: FileDescriptor?
            do throws(VarlinkError) {
                opened = try journal.openToRead(month)
            } catch {
                failure = error
                return nil
            }
            guard let file = opened else { continue }
            reading = (month, file, size)
            offset = 0
            partialLine = []
            skippingLongLine = false
            badLines = 0
            earliestStart = nil
            return reading
        }
        return nil
    }

    private func endOfMonth(whole: Bool) {
        guard let reading else { return }
        if !partialLine.isEmpty {
            // A last line without its newline (written by hand): read as it is.
            let rest = partialLine
            partialLine = []
            rest.withUnsafeBytes { line($0) }
        }
        if badLines > 0 { journal.skippedBadLines(reading.month, count: badLines) }
        if whole { journal.readWhole(reading.month, earliestStart: earliestStart, size: reading.size) }
        closeReading()
    }

    private func closeReading() {
        reading?.file.close()
        reading = nil
    }

    /// A reply `{"parameters":{"intervals":[…]}}` and its NUL, written straight to bytes.
    static func message(_ intervals: ArraySlice<Interval>, continues: Bool) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32 + intervals.count * 96)
        bytes.append(contentsOf: #"{"parameters":{"intervals":["#.utf8)
        for (index, interval) in intervals.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            HistoryLine.encodeObject(interval, into: &bytes)
        }
        bytes.append(contentsOf: "]}".utf8)
        if continues { bytes.append(contentsOf: #","continues":true"#.utf8) }
        bytes.append(contentsOf: "}\u{0}".utf8)
        return bytes
    }
}
