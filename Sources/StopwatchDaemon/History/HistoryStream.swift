import Dispatch
import LinuxSystem
import StopwatchProtocol
import Varlink

/// One `History` call's replies: the journal's intervals that match, month after month,
/// then those not written yet and those still counting, oldest first.
///
/// Cooperative, so that a history of millions of lines never holds the serving queue: each
/// turn of the queue reads at most `linesPerTurn` lines (through the one 64 KiB buffer all
/// streams share) and then queues the next turn, so ticks and other clients are served
/// between.
///
/// Its memory is the daemon's `HistoryMemory` budget's: before it encodes a reply it asks
/// for a grant, and it encodes matches straight into the reply until the reply is full (its
/// grant, or `batchSize` intervals) and one more match is known (the look-ahead that says
/// whether it is the last). Then reading pauses until the connection pulls the reply; the
/// reply's bytes are given back when the connection pulls again (it pulls only once the
/// socket has taken everything) or lets go of the stream. A reader that does not read so
/// holds at most two replies (the one its socket is taking and the next), each no larger
/// than its share of the budget; while the budget is spent, its next reply waits.
///
/// Without `more`, only one reply may be sent: the intervals, or `TooManyResults` as soon
/// as there are more than `batchSize`. That reply cannot be cut at its grant: it asks for
/// more as it grows (`HistoryMemory` lets one such reply grow at a time).
///
/// Not thread-safe: it belongs to the server's queue.
// Unchecked Sendable, so that its next turn can be queued: every stored property is used
// only on `queue` (serial), where the connection calls it and where its turns run.
final class HistoryStream: VarlinkReplyStream, @unchecked Sendable {
    /// The read buffer `HistoryMemory` shares among the streams.
    static let bufferSize = 64 * 1024
    /// A line longer than this is not an interval: skipped whole, without keeping it.
    static let maximumLineLength = 64 * 1024

    /// Where the replies are. A turn is queued when `building` begins, and queues the next
    /// only while it stays `building`: one chain of turns at a time.
    private enum State {
        /// Not started, or waiting for the budget to grant the next reply; `first` is the
        /// match read after the last reply, which begins this one.
        case waitingForMemory(first: Interval?)
        /// Reading and encoding matches into `reply`, turn after turn.
        case building
        /// Waiting for more memory for a reply that cannot be cut (without `more`); `next`
        /// is the match that did not fit.
        case waitingToGrow(next: Interval)
        /// A reply is complete, for the connection's next pull, holding `bytes` of the budget.
        case ready(VarlinkStreamItem, bytes: Int, after: AfterReply)
        /// The last reply was pulled, or the stream cancelled.
        case finished
    }

    private enum AfterReply {
        case last
        /// More follow, beginning with this match.
        case more(Interval)

        var isLast: Bool {
            if case .last = self { true } else { false }
        }
    }

    private let query: HistoryQuery
    private let more: Bool
    private let journal: HistoryJournal
    private let queue: DispatchQueue
    private let memory: HistoryMemory
    private let account: HistoryMemory.Account
    private let batchSize: Int
    private let linesPerTurn: Int
    private var months: ArraySlice<(month: HistoryMonth, size: Int64)>
    /// What comes after the files: intervals not written yet, then the open ones (only those
    /// that match; counted in the budget as `fixed` until the stream ends).
    private var tail: ArraySlice<Interval>

    private var reading: (month: HistoryMonth, file: FileDescriptor, size: Int64)?
    private var offset: Int64 = 0
    /// The start of a line whose end is in the next chunk.
    private var partialLine: [UInt8] = []
    private var skippingLongLine = false
    private var badLines = 0
    private var earliestStart: Int64?
    /// Why the call fails: a month that cannot be read (`HistoryJournal.readFailure`).
    private var failure: VarlinkError?

    private var state = State.waitingForMemory(first: nil)
    /// The reply being encoded while `building` (and `waitingToGrow`); empty otherwise.
    private var reply = HistoryReply()
    /// Bytes of the reply the connection pulled last: still in its output until it pulls
    /// again (or lets go of the stream).
    private var pulledBytes = 0
    private var ready: (() -> Void)?

    init(
        query: HistoryQuery,
        more: Bool,
        journal: HistoryJournal,
        memory: HistoryMemory,
        queue: DispatchQueue,
        tail: [Interval],
        batchSize: Int,
        linesPerTurn: Int = 10_000
    ) {
        self.query = query
        self.more = more
        self.journal = journal
        self.memory = memory
        self.queue = queue
        let matching = tail.filter(query.matches)
        self.tail = matching[...]
        self.batchSize = max(batchSize, 1)
        self.linesPerTurn = max(linesPerTurn, 1)
        do throws(VarlinkError) {
            months = try journal.monthsToRead()[...]
        } catch {
            months = []
            failure = error
        }
        account = memory.openAccount()
        account.takeFixed(matching.reduce(0) { $0 + MemoryLayout<Interval>.stride + $1.name.utf8.count })
        account.whenGranted = { [weak self] bytes in self?.granted(bytes) }
    }

    deinit {
        reading?.file.close()
        account.close()
    }

    /// Ends by itself: answers a call without `more` too (exactly one `.last`), and calls
    /// pipelined behind it wait for its end.
    var isFinite: Bool { true }

    /// Its reader may pause as long as it likes: the stream pauses with it, within the budget.
    var waitsForReader: Bool { true }

    func start(ready: @escaping () -> Void) {
        self.ready = ready
        askForMemory(first: nil)
    }

    func next() -> VarlinkStreamItem? {
        // The connection pulls once its socket has taken everything: the last reply is written.
        let written = pulledBytes
        pulledBytes = 0
        account.giveBack(written)
        guard case .ready(let item, let bytes, let after) = state else { return nil }
        pulledBytes = bytes
        switch after {
        case .last: state = .finished
        case .more(let next): askForMemory(first: next)
        }
        return item
    }

    func takeEnd() -> VarlinkError? { nil }

    /// Nothing more is pulled: the connection is closing, or has written the last reply.
    func cancel() {
        ready = nil
        state = .finished
        reply = HistoryReply()
        pulledBytes = 0
        tail = []
        closeReading()
        account.close()
    }

    // MARK: Memory

    /// Waits for the next reply's grant, or begins it at once.
    private func askForMemory(first: Interval?) {
        state = .waitingForMemory(first: first)
        if let bytes = account.request(whole: !more) { granted(bytes) }
    }

    /// The budget granted `bytes`, now or after a wait.
    private func granted(_ bytes: Int) {
        switch state {
        case .waitingForMemory(let first):
            reply = HistoryReply(granted: bytes)
            state = .building
            if let first { add(first) }
        case .waitingToGrow(let next):
            reply.granted += bytes
            state = .building
            add(next)
        case .building, .ready, .finished:
            // Not asked for: given back.
            account.giveBack(bytes)
            return
        }
        continueAfterChange()
    }

    // MARK: Turns

    private var isBuilding: Bool {
        if case .building = state { true } else { false }
    }

    /// One turn: reads until the reply is complete or `linesPerTurn` lines are read.
    private func work() {
        guard isBuilding else { return }
        var lines = 0
        while lines < linesPerTurn, isBuilding {
            if let read = readSome(atMost: linesPerTurn - lines) {
                lines += max(read, 1)
            } else {
                readTail()
            }
        }
        continueAfterChange()
    }

    /// Building goes on in a turn of its own; a reply complete is the connection's to pull.
    /// Called last, by whatever changed the state: the connection may pull at once, and its
    /// pull may begin the next reply, with its own turns.
    private func continueAfterChange() {
        switch state {
        case .building: queue.async { [weak self] in self?.work() }
        case .ready: ready?()
        case .waitingForMemory, .waitingToGrow, .finished: break
        }
    }

    /// The months are read: the intervals after them, then the last reply.
    private func readTail() {
        if let failure {
            // Not what was read as if it were all: the call fails, and says why.
            end(with: .end(failure))
            return
        }
        while isBuilding, let interval = tail.popFirst() { add(interval) }
        if isBuilding { complete(.last) }
    }

    /// Ends the stream with `item` instead of the reply being built (`TooManyResults`, or
    /// the error that fails the call).
    private func end(with item: VarlinkStreamItem) {
        account.giveBack(reply.granted)
        reply = HistoryReply()
        tail = []
        closeReading()
        if !more { account.endWholeReply() }
        account.giveBackFixed()
        state = .ready(item, bytes: 0, after: .last)
    }

    /// A match: into the reply, or, when the reply is full, the look-ahead that completes it.
    private func add(_ interval: Interval) {
        if reply.add(interval, batchSize: batchSize) { return }
        if more {
            complete(.more(interval))
        } else if reply.count >= batchSize {
            end(with: .last(VarlinkReply(.tooManyResults(limit: batchSize)).message))
        } else if let bytes = account.request(whole: true) {
            // Without `more` the reply cannot be cut: it grows, grant after grant.
            reply.granted += bytes
            add(interval)
        } else {
            state = .waitingToGrow(next: interval)
        }
    }

    /// The reply is complete: it waits for the connection to pull it.
    private func complete(_ after: AfterReply) {
        var finished = reply
        reply = HistoryReply()
        let message = finished.message(continues: !after.isLast)
        // What the reply holds now, instead of what was granted for it.
        let holds = message.capacity
        if holds < finished.granted {
            account.giveBack(finished.granted - holds)
        } else {
            account.take(holds - finished.granted)
        }
        if after.isLast {
            closeReading()
            account.giveBackFixed()
            if !more { account.endWholeReply() }
        }
        state = .ready(after.isLast ? .last(message) : .message(message), bytes: holds, after: after)
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
        let buffer = memory.readBuffer
        let length = Int(min(Int64(buffer.count), remaining))
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
        // A reply completed by a line ends the reading: the lines after it are read again
        // for the next reply.
        while index < count, lines < limit, isBuilding {
            guard let newline = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: chunk, from: index) else { break }
            line(UnsafeRawBufferPointer(rebasing: chunk[lineStart..<newline]))
            lines += 1
            index = newline + 1
            lineStart = index
        }
        if lines < limit, lineStart < count, isBuilding {
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
        if query.matches(interval) { add(interval) }
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
}
