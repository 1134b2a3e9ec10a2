import Dispatch
import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// One `History` call's replies: the journal's intervals that match, month after month,
/// with the corrected and late ones (those not written yet among them) merged in by end,
/// then those still counting, oldest first.
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
        /// Reading and encoding matches into the reply, turn after turn.
        case building(HistoryReply)
        /// Waiting for more memory for a reply that cannot be cut (without `more`); `next`
        /// is the match that did not fit.
        case waitingToGrow(HistoryReply, next: Interval)
        /// A reply is complete, for the connection's next pull, holding `bytes` of the budget.
        case ready(VarlinkStreamItem, bytes: Int, after: AfterReply)
        /// The reply being built is out of the state for the length of one call on the
        /// server's queue, growing in place (left in the state too, its bytes would be
        /// copied); `putBack` sets what follows.
        case growing
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

    /// What is left of the journal's months: those to read, or why they cannot be.
    private enum Months {
        /// Still to read, oldest first, each up to its size when listed.
        case toRead(ArraySlice<(month: HistoryMonth, size: Int64)>)
        /// The history cannot be read (`HistoryJournal.readFailure`): the call fails with this
        /// once the months before are read.
        case unreadable(VarlinkError)
    }

    /// A month file being read, chunk after chunk, and what its lines told so far.
    private struct MonthReading {
        let month: HistoryMonth
        let file: FileDescriptor
        /// Its size when listed: what is read of it.
        let size: Int64
        /// Where the next chunk begins: after the last whole line, or after `carry`.
        var offset: Int64 = 0
        var carry = Carry.nothing
        var badLines = 0
        var earliestStart: Int64?
        /// Whether reading began past the month's first line (`startOffset`): its earliest
        /// start is then not known.
        var skippedLines = false

        /// What the last chunk ended with.
        enum Carry {
            /// A whole line: the next chunk begins one.
            case nothing
            /// The start of a line that goes on in the next chunk.
            case partialLine([UInt8])
            /// The start of a line longer than `maximumLineLength`: not an interval, its rest
            /// skipped without keeping it, and counted bad at its end.
            case longLine
        }

        /// Whether the next line begins in the chunk being read (none carried from the last).
        var isAtLineStart: Bool {
            if case .nothing = carry { true } else { false }
        }

        /// Learns a start read without `interval(endingWith:since:)`.
        mutating func learnStart(_ start: Int64) {
            earliestStart = min(earliestStart ?? start, start)
        }

        /// Keeps `bytes`, the start of a line that goes on in the next chunk.
        mutating func keepLineStart(_ bytes: UnsafeRawBufferPointer) {
            switch carry {
            case .longLine:
                return
            case .nothing:
                carry = .partialLine(Array(bytes))
            case .partialLine(var start):
                // Out of `carry` while it grows, so that it is not copied.
                carry = .nothing
                start.append(contentsOf: bytes)
                carry = .partialLine(start)
            }
            if case .partialLine(let start) = carry, start.count > HistoryStream.maximumLineLength {
                carry = .longLine
            }
        }

        /// The interval `line` ends, if it holds one that may match (after `since`); counts
        /// a line that holds none as bad, and learns the month's earliest start.
        mutating func interval(endingWith line: UnsafeRawBufferPointer, since: Int64?) -> Interval? {
            let carried = carry
            carry = .nothing
            let interval: Interval?
            switch consume carried {
            case .longLine:
                badLines += 1
                return nil
            case .nothing:
                // A correction: the index's (read at its building), no interval line.
                if HistoryLine.isCorrection(line) { return nil }
                // A line of the daemon's own shape that ended before `since` cannot match:
                // passed over by its times alone, its start still counted for the month's
                // earliest (a line damaged elsewhere is then not noticed by this call, only by
                // one that reads it).
                if let since, let times = HistoryLine.plainStartAndEnd(line), times.end < since, times.start <= times.end {
                    earliestStart = min(earliestStart ?? times.start, times.start)
                    return nil
                }
                interval = HistoryLine.parse(line)
                // An empty line is no interval, and no damage either.
                if interval == nil, line.isEmpty { return nil }
            case .partialLine(var start):
                // Too long once whole, though its start carried was not (as the index's
                // `forEachLine` refuses it: the two agree on which lines there are).
                guard start.count + line.count <= HistoryStream.maximumLineLength else {
                    badLines += 1
                    return nil
                }
                start.append(contentsOf: line)
                let isCorrection = start.withUnsafeBytes { HistoryLine.isCorrection($0) }
                if isCorrection { return nil }
                interval = start.withUnsafeBytes { HistoryLine.parse($0) }
            }
            guard let interval else {
                badLines += 1
                return nil
            }
            earliestStart = min(earliestStart ?? interval.startMs, interval.startMs)
            return interval
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

    /// Set only through `enter(_:)`, which keeps `isBuilding` with it.
    private var state = State.waitingForMemory(first: nil)
    /// Whether `state` is `.building`: asked once per line read, where matching the state's
    /// case copied it (its reply's buffer retained and released) each time.
    private var isBuilding = false

    /// Sets `state` (and `isBuilding`, told from `next` while it is still a local: matching
    /// the stored state would copy it).
    private func enter(_ next: consuming State) {
        if case .building = next { isBuilding = true } else { isBuilding = false }
        state = next
    }
    private var months: Months
    /// The month being read, if one is open. Not a phase of `state`: one month's lines may
    /// fill several replies, and one reply hold lines of several months.
    private var reading: MonthReading?
    /// What comes after the files and the corrected ones: the open intervals that match
    /// (counted in the budget as `fixed` until the stream ends). The intervals not written yet
    /// are the index's late lines, merged in end order with `corrected`; they are filtered out
    /// of the tail given to `init`, which holds them too.
    private var tail: ArraySlice<Interval>
    /// The intervals whose form a correction sets, that match, by end: merged into the
    /// months' lines in end order (counted in the budget as `fixed`, as `tail`).
    private var corrected: ArraySlice<CorrectionIndex.Moved> = []
    /// Lines held back behind a corrected interval that completed a reply (`.held` in
    /// `corrected`).
    private var heldLines: [Interval] = []
    /// The correction index as the call began: the lines of the ids it corrects are skipped.
    private var corrections = CorrectionIndex()
    private let deviceName: String
    /// `,"device":"<deviceName>"}`: what ends a plain line copied into a reply.
    private let deviceEnd: [UInt8]
    /// The query's name as bytes, compared with a plain line's (as `StopwatchKey` compares).
    private let queryName: [UInt8]?
    /// Bytes of the reply the connection pulled last: still in its output until it pulls
    /// again (or lets go of the stream). Not a phase: the next reply is built meanwhile.
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
        self.deviceName = journal.deviceName
        var deviceEnd = Array(#","device":"#.utf8)
        HistoryLine.appendString(journal.deviceName, to: &deviceEnd)
        deviceEnd.append(UInt8(ascii: "}"))
        self.deviceEnd = deviceEnd
        self.queryName = query.name.map { Array($0.utf8) }
        self.batchSize = max(batchSize, 1)
        self.linesPerTurn = max(linesPerTurn, 1)
        do throws(VarlinkError) {
            corrections = try journal.correctionIndex()
            months = .toRead(try journal.monthsToRead()[...])
        } catch {
            months = .unreadable(error)
        }
        let index = corrections
        // The open ones; those not written yet only where the index does not hold them as late.
        let matching = tail.filter { query.matches($0) && ($0.id.isEmpty || !index.corrects($0.id)) }
        self.tail = matching[...]
        // By where the index keeps them: each interval is made as it is sent.
        let correctedMatching = index.moved(matching: query.matches)
        account = memory.openAccount()
        account.takeFixed(matching.reduce(correctedMatching.count * MemoryLayout<CorrectionIndex.Moved>.stride) {
            $0 + MemoryLayout<Interval>.stride + $1.name.utf8.count + ($1.note?.utf8.count ?? 0)
        })
        corrected = correctedMatching[...]
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
        case .last: enter(.finished)
        case .more(let next): askForMemory(first: next)
        }
        return item
    }

    func takeEnd() -> VarlinkError? { nil }

    /// Nothing more is pulled: the connection is closing, or has written the last reply.
    func cancel() {
        ready = nil
        enter(.finished)
        pulledBytes = 0
        tail = []
        corrected = []
        heldLines = []
        closeReading()
        account.close()
    }

    // MARK: Memory

    /// Waits for the next reply's grant, or begins it at once.
    private func askForMemory(first: Interval?) {
        enter(.waitingForMemory(first: first))
        if let bytes = account.request(whole: !more) { granted(bytes) }
    }

    /// The budget granted `bytes`, now or after a wait.
    private func granted(_ bytes: Int) {
        let next: Interval?
        switch state {
        case .waitingForMemory(let first):
            enter(.building(HistoryReply(granted: bytes)))
            next = first
        case .waitingToGrow(var reply, let match):
            reply.granted += bytes
            enter(.building(reply))
            next = match
        case .building, .ready, .growing, .finished:
            // Not asked for: given back.
            account.giveBack(bytes)
            return
        }
        if let next { add(next) }
        continueAfterChange()
    }

    // MARK: Turns

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
        case .waitingForMemory, .waitingToGrow, .growing, .finished: break
        }
    }

    /// The months are read: the intervals after them, then the last reply.
    private func readTail() {
        if case .unreadable(let failure) = months {
            // Not what was read as if it were all: the call fails, and says why.
            if let reply = takeReply() { putBack(ending(with: .end(failure), dropping: reply)) }
            return
        }
        // The corrected and late ones still to come (the intervals not written yet among
        // them: the index holds those as late), then the open ones.
        while isBuilding, let moved = corrected.popFirst() { add(moved) }
        while isBuilding, let interval = tail.popFirst() { add(withDevice(interval)) }
        if var reply = takeReply() { putBack(completing(&reply, .last)) }
    }

    // MARK: The reply

    /// The reply being built, taken out of `state` (`.growing` until the caller puts back
    /// the next), so that it grows in place: left in `state` too, its bytes would be copied.
    private func takeReply() -> HistoryReply? {
        guard isBuilding else { return nil }
        // Moved out, not copied: the reply's buffer is then uniquely referenced, so it grows
        // in place, and no retain and release are paid per line.
        var taken = State.growing
        swap(&taken, &state)
        isBuilding = false
        guard case .building(let reply) = taken else {
            // `isBuilding` and `state` disagree (no path sets one without the other): put it
            // back rather than lose it.
            assertionFailure("isBuilding without a reply being built")
            enter(taken)
            return nil
        }
        return reply
    }

    /// Sets the state that follows `.growing`; a stream cancelled meanwhile stays finished
    /// (nothing adding to a reply calls out today, so none is: this keeps it so).
    private func putBack(_ next: State) {
        guard case .growing = state else { return }
        enter(next)
    }

    /// A match: into the reply, or, when the reply is full, the look-ahead that completes it.
    private func add(_ interval: Interval) {
        guard var reply = takeReply() else { return }
        putBack(adding(interval, to: &reply))
    }

    /// The state once `interval` is added to `reply`.
    private func adding(_ interval: Interval, to reply: inout HistoryReply) -> State {
        while !reply.add(interval, batchSize: batchSize) {
            if more { return completing(&reply, .more(interval)) }
            if reply.count >= batchSize {
                return ending(with: .last(VarlinkReply(.tooManyResults(limit: batchSize)).message), dropping: reply)
            }
            // Without `more` the reply cannot be cut: it grows, grant after grant.
            guard let bytes = account.request(whole: true) else { return .waitingToGrow(reply, next: interval) }
            reply.granted += bytes
        }
        return .building(reply)
    }

    /// The stream's end with `item` instead of `reply` (`TooManyResults`, or the error that
    /// fails the call).
    private func ending(with item: VarlinkStreamItem, dropping reply: HistoryReply) -> State {
        account.giveBack(reply.granted)
        tail = []
        corrected = []
        heldLines = []
        closeReading()
        if !more { account.endWholeReply() }
        account.giveBackFixed()
        return .ready(item, bytes: 0, after: .last)
    }

    /// `reply` complete: it waits for the connection to pull it.
    private func completing(_ reply: inout HistoryReply, _ after: AfterReply) -> State {
        let message = reply.message(continues: !after.isLast)
        // What the reply holds now, instead of what was granted for it.
        let holds = message.capacity
        if holds < reply.granted {
            account.giveBack(reply.granted - holds)
        } else {
            account.take(holds - reply.granted)
        }
        if after.isLast {
            closeReading()
            account.giveBackFixed()
            if !more { account.endWholeReply() }
        }
        return .ready(after.isLast ? .last(message) : .message(message), bytes: holds, after: after)
    }

    // MARK: Reading the months

    /// Reads lines of the current month (opening the next one as needed); the work done, in
    /// lines (or in bytes / 64, when that is more), or nil once every month is read.
    private func readSome(atMost limit: Int) -> Int? {
        guard let reading = reading ?? openNextMonth() else { return nil }
        let remaining = reading.size - reading.offset
        guard remaining > 0 else {
            endOfMonth(whole: true)
            return 0
        }
        let buffer = memory.readBuffer
        let length = Int(min(Int64(buffer.count), remaining))
        let count: Int
        do throws(Errno) {
            count = try reading.file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length]), at: reading.offset)
        } catch {
            months = .unreadable(journal.readFailure(reading.month, error))
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
            let line = UnsafeRawBufferPointer(rebasing: chunk[lineStart..<newline])
            let atLineStart = self.reading?.isAtLineStart == true
            if atLineStart, let since = query.since, let times = HistoryLine.plainStartAndEnd(line), times.end < since, times.start <= times.end {
                // Ended before `since`: passed over by its times alone, read from its tail (a
                // fraction of `plain`'s checks: `log --since today` passes over a month of them).
                self.reading?.learnStart(times.start)
            } else if atLineStart, let plain = HistoryLine.plain(line) {
                found(plain, line: line)
            } else {
                found(self.reading?.interval(endingWith: line, since: query.since) ?? nil)
            }
            lines += 1
            index = newline + 1
            lineStart = index
        }
        if lines < limit, lineStart < count, isBuilding {
            // The end of the chunk is the start of a line that goes on in the next one.
            self.reading?.keepLineStart(UnsafeRawBufferPointer(rebasing: chunk[lineStart..<count]))
            lineStart = count
        }
        self.reading?.offset += Int64(lineStart)
        // Bytes count too, a line per 64 of them: a month of megabytes without a newline
        // (garbage, zeros after a crash) must not hold one turn for seconds.
        return max(lines, count / 64)
    }

    /// What a line held: added if it matches and no correction sets its form, after the
    /// corrected intervals that ended before it.
    private func found(_ interval: Interval?) {
        guard let interval, query.matches(interval) else { return }
        if corrections.corrects(interval.id) { return }
        let line = withDevice(interval)
        let end = line.endMs ?? 0
        while let first = corrected.first, first.end <= end {
            corrected.removeFirst()
            add(first)
            guard isBuilding else {
                // The reply is complete, `first` its look-ahead: the line goes after it, in
                // end order among the corrected ones still to come.
                let place = corrected.firstIndex { $0.end > end } ?? corrected.endIndex
                var rest = Array(corrected)
                rest.insert(CorrectionIndex.Moved(end: end, start: line.startMs, kind: .held, slot: Int32(heldLines.count)), at: place - corrected.startIndex)
                heldLines.append(line)
                corrected = rest[...]
                return
            }
        }
        add(line)
    }

    /// A line of the daemon's plain shape (`HistoryLine.plain`): when it matches, is read where
    /// it lies (no correction, not late) and no corrected interval comes before it, its bytes
    /// go into the reply as they are, with the device; no `Interval` is built for it. Else
    /// (and as the look-ahead that completes a full reply) it is parsed, as any line is.
    private func found(_ plain: HistoryLine.Plain, line: UnsafeRawBufferPointer) {
        reading?.learnStart(plain.start)
        guard matches(plain, line), !corrections.corrects(number: plain.id) else { return }
        if corrected.first.map({ $0.end > plain.end }) ?? true, var reply = takeReply() {
            let added = reply.add(plainLine: line, deviceEnd: deviceEnd, batchSize: batchSize)
            putBack(.building(reply))
            if added { return }
        }
        found(HistoryLine.parse(line))
    }

    /// `query.matches` for a plain line, from its bytes and numbers.
    private func matches(_ plain: HistoryLine.Plain, _ line: UnsafeRawBufferPointer) -> Bool {
        if let queryName {
            guard plain.name.count == queryName.count else { return false }
            let same = queryName.withUnsafeBytes { name in
                memcmp(line.baseAddress! + plain.name.lowerBound, name.baseAddress!, name.count) == 0
            }
            guard same else { return false }
        }
        if let until = query.until, plain.start >= until { return false }
        guard let since = query.since else { return true }
        return plain.end == plain.start ? plain.start >= since : plain.end > since
    }

    /// A corrected, late or held-back interval, as the reply carries it.
    private func add(_ moved: CorrectionIndex.Moved) {
        if moved.kind == .held {
            add(heldLines[Int(moved.slot)])
        } else if let interval = corrections.interval(moved) {
            add(withDevice(interval))
        }
    }

    /// `interval` as a reply carries it: with this device's name.
    private func withDevice(_ interval: Interval) -> Interval {
        var interval = interval
        interval.device = deviceName
        return interval
    }

    private func openNextMonth() -> MonthReading? {
        while case .toRead(var left) = months, let (month, size) = left.popFirst() {
            months = .toRead(left)
            guard query.mayMatch(month, earliestStart: journal.earliestStart(of: month)) else { continue }
            let opened: (file: FileDescriptor, status: FileStatus)?
            do throws(VarlinkError) {
                opened = try journal.openToRead(month)
            } catch {
                months = .unreadable(error)
                return nil
            }
            guard let (file, status) = opened else { continue }
            var opening = MonthReading(month: month, file: file, size: size)
            // Only a file the index learnt up to the size read: one changed from outside may
            // hold a line in end order anywhere.
            if let since = query.since, since > month.startMilliseconds, size > Self.bisectedSize,
                corrections.hasLearnt(month, file: status, size: size)
            {
                opening.offset = startOffset(in: file, size: size, since: since)
                opening.skippedLines = opening.offset > 0
                if opening.skippedLines { journal.monthsBisected += 1 }
            }
            reading = opening
            return reading
        }
        return nil
    }

    private func endOfMonth(whole: Bool) {
        // Told from this copy: a last line that completes the stream closes `reading`.
        guard var month = reading else { return }
        if case .partialLine(let rest) = month.carry {
            // A last line without its newline (written by hand): read as it is.
            month.carry = .nothing
            found(rest.withUnsafeBytes { month.interval(endingWith: $0, since: query.since) })
        }
        if month.badLines > 0 { journal.skippedBadLines(month.month, count: month.badLines) }
        journal.readToEnd(month.month)
        if whole, !month.skippedLines { journal.readWhole(month.month, earliestStart: month.earliestStart, size: month.size) }
        closeReading()
    }

    /// A month file larger than this is bisected for `since` (`startOffset`).
    static let bisectedSize: Int64 = 256 * 1024

    /// Where in a month's `file` (`size` bytes) reading for `since` may begin: a line start
    /// before which every line in end order ends before `since`. Found by bisecting the
    /// file's bytes: each probe is the first line after the midpoint that is in end order
    /// (an interval, not late, not corrected: `probe`). Within a month file the index learnt
    /// (`CorrectionIndex.hasLearnt`: the same file, at the size read; asked before this is
    /// called), the lines that are not late are in end order (`CorrectionIndex.isLate`); the
    /// late and corrected ones come from the index, wherever they lie. `log --since today`
    /// then reads today's lines, not the month's. 0 when no probe finds such a line (a month
    /// of damage, or of late lines): read whole, as before. The lines passed over are not
    /// read, so not checked: damage in them is noticed by a call that reads them.
    private func startOffset(in file: FileDescriptor, size: Int64, since: Int64) -> Int64 {
        var low: Int64 = 0
        var high = size
        var window = [UInt8](repeating: 0, count: 8 * 1024)
        while high - low > Int64(window.count) {
            let middle = low + (high - low) / 2
            guard let line = probe(file, at: middle, before: size, into: &window) else { break }
            if line.end < since {
                // Every line in end order up to this one ends before `since`.
                low = line.start
            } else {
                high = middle
            }
        }
        return low
    }

    /// The first line that begins after `offset` (and within the window read there) holding
    /// an interval in end order: where it begins, and its end. Nil when the window holds none.
    private func probe(_ file: FileDescriptor, at offset: Int64, before size: Int64, into window: inout [UInt8]) -> (start: Int64, end: Int64)? {
        let length = Int(min(Int64(window.count), size - offset))
        guard length > 0 else { return nil }
        return window.withUnsafeMutableBytes { raw -> (start: Int64, end: Int64)? in
            guard let count = try? file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<length]), at: offset), count > 0 else { return nil }
            let chunk = UnsafeRawBufferPointer(rebasing: raw[0..<count])
            // The line `offset` falls in may have begun before it: the next one is the first whole.
            guard var lineStart = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: chunk, from: 0).map({ $0 + 1 }) else { return nil }
            while let newline = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: chunk, from: lineStart) {
                let line = UnsafeRawBufferPointer(rebasing: chunk[lineStart..<newline])
                if let plain = HistoryLine.plain(line) {
                    if !corrections.corrects(number: plain.id) { return (offset + Int64(lineStart), plain.end) }
                } else if !HistoryLine.isCorrection(line), let interval = HistoryLine.parse(line), let end = interval.endMs, !corrections.corrects(interval.id) {
                    return (offset + Int64(lineStart), end)
                }
                lineStart = newline + 1
            }
            return nil
        }
    }

    private func closeReading() {
        reading?.file.close()
        reading = nil
    }
}
