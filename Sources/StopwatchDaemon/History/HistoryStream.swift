import Dispatch
import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// One `History` call's replies: the intervals that match of every device whose folder is in
/// the history folder (this device's and the peers' `PeerDevices` learnt), each device's
/// months read in order (`DeviceLines`) and merged by end with the others' and with the
/// corrected and late ones (those not written yet among them), then those still counting
/// (this device's, and the peers' from their `open.json`), oldest first.
///
/// Cooperative, so that a history of millions of lines never holds the serving queue: each
/// turn of the queue reads at most `linesPerTurn` lines (this device's through the one 64 KiB
/// buffer all streams share, each peer's through a 16 KiB one of its own, taken when its
/// first month is opened and given back at its end, counted in the budget meanwhile) and
/// then queues the next turn, so ticks and other clients are served between. The merge holds one line of each device at a time (its head).
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
    /// Each device's months being read: this device's first, then the peers' by id. Not a
    /// phase of `state`: one device's lines may fill several replies, and one reply hold
    /// lines of several.
    private var devices: [DeviceLines] = []
    /// Why the call fails once the lines before are sent (this device's history cannot be
    /// read: `HistoryJournal.readFailure`).
    private var failure: VarlinkError?
    /// What comes after the files and the corrected ones: the open intervals that match
    /// (counted in the budget as `fixed` until the stream ends). The intervals not written yet
    /// are the index's late lines, merged in end order with `corrected`; they are filtered out
    /// of the tail given to `init`, which holds them too.
    private var tail: ArraySlice<Interval>
    /// The intervals whose form a correction sets, and the late lines, that match, by end:
    /// merged into the devices' lines in end order (counted in the budget as `fixed`, as `tail`).
    private var corrected: ArraySlice<CorrectionIndex.Moved> = []
    /// The correction index as the call began: the lines of the ids it corrects are skipped.
    /// A `let`: passed to each device's reading once per line, a `var` was copied each time
    /// (every reference it holds retained and released: a sixth of a report's samples over
    /// three devices).
    private let corrections: CorrectionIndex
    /// The names of the devices read, by id (a device not read is shown by its id).
    private var deviceNames: [String: String] = [:]
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
        self.batchSize = max(batchSize, 1)
        self.linesPerTurn = max(linesPerTurn, 1)
        account = memory.openAccount()
        var peersOpen: [Interval] = []
        let ownMatches = query.matchesDevice(id: journal.deviceID, name: journal.deviceName)
        deviceNames[journal.deviceID] = journal.deviceName
        var corrections = CorrectionIndex()
        do throws(VarlinkError) {
            // First: it refreshes what the peers' folders hold (`PeerDevices`).
            corrections = try journal.correctionIndex()
            let ownMonths = ownMatches ? try journal.monthsToRead() : []
            devices.append(DeviceLines(
                deviceID: journal.deviceID, deviceName: journal.deviceName, isOwn: true, months: ownMonths,
                buffer: memory.readBuffer, isShared: true
            ))
            for source in journal.peers.sources(device: nil) {
                deviceNames[source.id] = source.name
                guard query.matchesDevice(id: source.id, name: source.name), !source.months.isEmpty else { continue }
                // Its read buffer is taken when its first month is opened (`takePeerBuffer`).
                devices.append(DeviceLines(
                    deviceID: source.id, deviceName: source.name, isOwn: false, months: source.months, buffer: nil, isShared: false
                ))
            }
            peersOpen = journal.peers.openIntervals(device: query.device, now: journal.wallClock.nowMilliseconds())
            journal.notePeerProblem()
        } catch {
            failure = error
        }
        self.corrections = corrections
        let index = corrections
        let names = deviceNames
        // The open ones, this device's and the peers', by start; those not written yet only
        // where the index does not hold them as late.
        var open = ownMatches ? tail.filter { query.matches($0) && ($0.id.isEmpty || !index.corrects($0.id)) } : []
        for index in open.indices { open[index].device = journal.deviceName }
        open += peersOpen.filter { query.matches($0) && !index.corrects($0.id) }
        // By start, then id: the same order on every device (not this device's first).
        open.sort { ($0.startMs, $0.id) < ($1.startMs, $1.id) }
        self.tail = open[...]
        // By where the index keeps them: each interval is made as it is sent.
        let correctedMatching = index.moved(
            matching: query.matches, since: query.since,
            device: query.device == nil ? nil : { device in query.matchesDevice(id: device, name: names[device] ?? device) }
        )
        account.takeFixed(open.reduce(correctedMatching.count * MemoryLayout<CorrectionIndex.Moved>.stride) {
            $0 + MemoryLayout<Interval>.stride + $1.name.utf8.count + ($1.note?.utf8.count ?? 0) + ($1.phase?.utf8.count ?? 0)
                + $1.device.utf8.count
        })
        corrected = correctedMatching[...]
        account.whenGranted = { [weak self] bytes in self?.granted(bytes) }
    }

    deinit {
        closeReading()
        for index in devices.indices { devices[index].giveBackBuffer()?.deallocate() }
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

    /// One turn: merges until the reply is complete or about `linesPerTurn` lines are read.
    private func work() {
        guard isBuilding else { return }
        var lines = 0
        merging: while lines < linesPerTurn, isBuilding {
            // Every device's next line, or its end: the merge needs them all.
            for index in devices.indices where devices[index].headEnd == nil && !devices[index].isAtEnd {
                lines += devices[index].advance(query, journal, corrections, atMost: linesPerTurn - lines) { takePeerBuffer() }
                // A device read to its end holds no buffer any more.
                if devices[index].isAtEnd, let buffer = devices[index].giveBackBuffer() {
                    buffer.deallocate()
                    account.giveBackFixed(DeviceLines.peerBufferSize)
                }
                if let failed = devices[index].failure {
                    failure = failed
                    closeReading()
                    break
                }
                // The turn's lines are spent before its next line is found: the next turn goes on.
                if devices[index].headEnd == nil, !devices[index].isAtEnd { continue merging }
            }
            if let failure {
                // Not what was read as if it were all: the call fails, and says why.
                if let reply = takeReply() { putBack(ending(with: .end(failure), dropping: reply)) }
                break
            }
            let earliest = earliestHead()
            // A corrected or late one first when it ends no later (as within one device).
            if let moved = corrected.first, earliest.map({ moved.end <= devices[$0].headEnd! }) ?? true {
                corrected.removeFirst()
                add(moved)
            } else if let earliest {
                send(earliest)
            } else {
                readTail()
            }
            lines += 1
        }
        // Nothing of this turn's may stay in the shared buffer.
        for index in devices.indices { devices[index].suspend() }
        continueAfterChange()
    }

    /// The device whose head is sent next: the one that ends first; of those that end
    /// together, the one that starts first, then the one of the lesser device id, then of the
    /// lesser interval id. Nothing in it depends on which device is this one: every device
    /// reading the same files lists them in the same order.
    private func earliestHead() -> Int? {
        // One device (the common case): nothing to compare.
        if devices.count == 1 { return devices[0].headEnd == nil ? nil : 0 }
        var earliest: Int?
        var earliestEnd: Int64 = 0
        for index in devices.indices {
            // Its end, not the head: copying a head out of the array retained what it holds.
            guard let end = devices[index].headEnd else { continue }
            guard let best = earliest else {
                earliest = index
                earliestEnd = end
                continue
            }
            if end != earliestEnd {
                if end < earliestEnd {
                    earliest = index
                    earliestEnd = end
                }
                continue
            }
            // A tie (rare): the rest of the order, read only now.
            guard let head = devices[index].head, let bestHead = devices[best].head else { continue }
            let (start, id) = head.startAndID
            let (bestStart, bestID) = bestHead.startAndID
            if (start, devices[index].deviceID, id) < (bestStart, devices[best].deviceID, bestID) { earliest = index }
        }
        return earliest
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

    /// Every device's lines and the corrected ones are sent: the open ones, then the last reply.
    private func readTail() {
        while isBuilding, let interval = tail.popFirst() { add(interval) }
        if var reply = takeReply() { putBack(completing(&reply, .last)) }
    }

    /// The head of `devices[index]` into the reply: a plain line's bytes as they are, with its
    /// device, no `Interval` built for it; else (and as the look-ahead that completes a full
    /// reply) the interval, parsed.
    private func send(_ index: Int) {
        guard let head = devices[index].takeHead() else { return }
        switch head {
        case .plain(_, let range):
            let line = devices[index].line(range)
            if var reply = takeReply() {
                let added = reply.add(plainLine: line, deviceEnd: devices[index].deviceEnd, batchSize: batchSize)
                putBack(.building(reply))
                if added { return }
            }
            guard var interval = HistoryLine.parse(line) else { return }
            interval.device = devices[index].deviceName
            add(interval)
        case .interval(var interval):
            interval.device = devices[index].deviceName
            add(interval)
        }
    }

    /// A corrected or late interval, as the reply carries it: with the name of the device it
    /// is shown under.
    private func add(_ moved: CorrectionIndex.Moved) {
        guard let (interval, device) = corrections.interval(moved) else { return }
        var shown = interval
        shown.device = deviceNames[device] ?? device
        add(shown)
    }

    /// A peer's read buffer, counted in the budget (`fixed`: never waits) until it is given
    /// back at the device's end or with the stream.
    private func takePeerBuffer() -> UnsafeMutableRawBufferPointer {
        account.takeFixed(DeviceLines.peerBufferSize)
        return UnsafeMutableRawBufferPointer.allocate(byteCount: DeviceLines.peerBufferSize, alignment: 16)
    }

    private func closeReading() {
        for index in devices.indices { devices[index].closeReading() }
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


    /// A month file larger than this is bisected for `since` (`DeviceLines.startOffset`).
    static let bisectedSize: Int64 = 256 * 1024
}
