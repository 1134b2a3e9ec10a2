import Dispatch
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
import Varlink

/// One client: reads its calls, answers them, streams its watches.
///
/// Calls are answered in order, one at a time, and only while the unsent output is small:
/// a client that sends without reading stops being read. A connection streams at most one
/// `Watch`; updates the socket cannot take at once wait in a `WatchBacklog`, where ticks
/// merge and changes queue up to a limit, past which the watcher gets `WatchTooSlow`. One
/// that takes nothing for `writeTimeout` is disconnected, and so is one that neither calls
/// nor watches for `idleTimeout`. Nothing here ever blocks: the socket is non-blocking,
/// driven by the server's `SocketPoller`, whose handlers run on the server's queue.
///
/// `@unchecked Sendable` is safe here: every stored property is read and written only on
/// `queue`, a serial queue — the poller calls its handler there, the deadline timer is
/// created with it as its queue, and watch updates come on it (`WatchFanOut`) — so no two
/// threads touch this object at once.
final class Connection: @unchecked Sendable {
    let id: Int
    private let socket: FileDescriptor
    private let queue: DispatchQueue
    private let service: StopwatchService
    private let limits: ConnectionLimits
    private let logger: Logger
    private let clock: any StopWatchClock
    private let readBuffer: UnsafeMutableRawBufferPointer
    private let onClose: (Connection) -> Void

    private let poller: SocketPoller
    /// The socket's registration with `poller`, once `start` made it.
    private var pollToken: UInt64?
    private var isReading = true
    private var isWriting = false
    private var framer: VarlinkFramer
    private var output: [UInt8] = []
    private var outputSent = 0
    /// Close once the waiting calls are answered and `output` is sent: after a protocol
    /// error (no calls wait then), or when the client closed its end.
    private var closeWhenSent = false
    /// `flush` is running: a `send` from inside it only queues.
    private var isFlushing = false
    private(set) var isClosed = false

    /// Calls received but not answered yet, oldest first.
    private var unansweredCalls: [[UInt8]] = []

    private struct Watch {
        let name: String
        /// The updates not yet written.
        var backlog: WatchBacklog
        /// The first state a watch gets is the stopwatch as it was last updated, perhaps long
        /// ago: its elapsed time is computed when written. Later ones are fresh.
        var sentFirst = false
    }
    /// The stream of this connection's `Watch` call, if it made one.
    private var watch: Watch?

    /// When the current unfinished message began (while this end reads), when output last
    /// stalled, and when the client last sent anything.
    private var partialMessageSince: ContinuousClock.Instant?
    private var outputStalledSince: ContinuousClock.Instant?
    private var lastReceived = ContinuousClock.now
    private var deadlineTimer: (any DispatchSourceTimer)?
    /// When `deadlineTimer` is set to fire.
    private var armedDeadline: ContinuousClock.Instant?

    init(
        id: Int,
        socket: FileDescriptor,
        queue: DispatchQueue,
        poller: SocketPoller,
        service: StopwatchService,
        limits: ConnectionLimits,
        logger: Logger,
        clock: any StopWatchClock,
        readBuffer: UnsafeMutableRawBufferPointer,
        onClose: @escaping (Connection) -> Void
    ) {
        self.id = id
        self.socket = socket
        self.queue = queue
        self.poller = poller
        self.service = service
        self.limits = limits
        self.logger = logger
        self.clock = clock
        self.readBuffer = readBuffer
        self.onClose = onClose
        self.framer = VarlinkFramer(maximumMessageSize: limits.maximumMessageSize)
    }

    /// Starts reading calls. On failure, nothing is started, and the caller closes the socket.
    func start() throws(Errno) {
        pollToken = try poller.add(socket, for: .readable) { [weak self] ready in
            guard let self else { return }
            if ready.contains(.readable) { self.readAvailable() }
            if ready.contains(.writable) { self.flush() }
        }
        updateDeadlines()
    }

    /// Sends `message` (a whole varlink message, NUL included) as soon as the socket takes it.
    func send(_ message: [UInt8]) {
        guard !isClosed else { return }
        output.append(contentsOf: message)
        flush()
    }

    // MARK: Reading

    private func readAvailable() {
        guard !isClosed, isReading else { return }
        let count: Int
        do {
            count = try socket.read(into: readBuffer)
        } catch where error == .wouldBlock {
            return
        } catch {
            logger.debug("connection \(id): read failed: \(error)")
            close()
            return
        }
        lastReceived = .now
        guard count > 0 else {
            // The client is done sending: answer what it sent, then close.
            stopReading()
            closeWhenSent = true
            flush()
            return
        }
        let messages: [[UInt8]]
        do {
            messages = try framer.append(UnsafeRawBufferPointer(rebasing: readBuffer[..<count]))
        } catch {
            fail("message larger than \(error.limit) bytes")
            return
        }
        // The deadline is for the message now unfinished: a new one starts its own.
        if !messages.isEmpty || !framer.hasPartialMessage {
            partialMessageSince = framer.hasPartialMessage ? .now : nil
        } else if partialMessageSince == nil {
            partialMessageSince = .now
        }
        unansweredCalls.append(contentsOf: messages)
        answerCalls()
        updateDeadlines()
    }

    /// Answers waiting calls while the unsent output stays small; stops reading while some
    /// wait, so what one client can make the daemon hold is bounded.
    private func answerCalls() {
        while let call = unansweredCalls.first, !isClosed, output.count - outputSent <= limits.outputHighWater {
            unansweredCalls.removeFirst()
            handle(call)
        }
        if !unansweredCalls.isEmpty { stopReading() }
    }

    private func handle(_ message: [UInt8]) {
        guard watch == nil else {
            fail("this connection is streaming a Watch and takes no further calls; use another connection")
            return
        }
        let call: VarlinkCall
        do {
            call = try VarlinkCall(json: try JSONParser.parse(message))
        } catch let error as JSONParseError {
            fail("not JSON: \(error)")
            return
        } catch let error as MalformedMessage {
            fail(error.reason)
            return
        } catch {
            fail("\(error)")
            return
        }
        switch service.handle(call) {
        case .reply(let parameters):
            if !call.oneway { send(VarlinkReply(parameters: parameters).message) }
        case .failure(let error):
            if !call.oneway { send(VarlinkReply(error).message) }
        case .watch(let name):
            // A oneway Watch asks for a stream nobody will read: nothing to do.
            guard !call.oneway else { return }
            watch = Watch(name: name, backlog: WatchBacklog(limit: limits.maximumPendingEvents))
            service.registry.beginWatching(name, watcher: id) { [weak self] snapshot in
                self?.watchUpdated(snapshot)
            }
        }
    }

    /// Answers with `ProtocolError` and closes once that is sent.
    private func fail(_ reason: String) {
        guard !closeWhenSent else { return }
        logger.info("connection \(id): protocol error: \(reason)")
        finish(with: .protocolError(reason))
    }

    /// Sends `error` as the connection's last word and closes once it is sent. Calls that
    /// came after it and updates still waiting are dropped first: sending flushes, and
    /// flushing answers waiting calls.
    private func finish(with error: VarlinkError) {
        // Once closing, the first error stands (a deadline may still fire while it drains).
        guard !closeWhenSent else { return }
        watch?.backlog.removeAll()
        unansweredCalls = []
        stopReading()
        closeWhenSent = true
        send(VarlinkReply(error).message)
    }

    /// While this end does not read, an unfinished message is not the client's doing: its
    /// deadline starts again when reading does.
    private func stopReading() {
        guard isReading else { return }
        isReading = false
        partialMessageSince = nil
        updateInterest()
    }

    private func resumeReading() {
        guard !isReading, !closeWhenSent, !isClosed, unansweredCalls.isEmpty else { return }
        isReading = true
        if framer.hasPartialMessage { partialMessageSince = .now }
        updateInterest()
    }

    // MARK: Writing

    private func watchUpdated(_ snapshot: StopWatchSnapshot) {
        // Closing (an error, or the client's end of input): nothing may follow the last word.
        guard !isClosed, !closeWhenSent, watch != nil else { return }
        guard watch?.backlog.append(snapshot) == true else {
            let limit = limits.maximumPendingEvents
            logger.notice("connection \(id): disconnected, its watch fell more than \(limit) changes behind")
            finish(with: .watchTooSlow(pending: limit))
            return
        }
        // Written now if the socket is drained; otherwise it waits for the socket.
        if output.count == outputSent { flush() }
    }

    /// A `Watch` reply: the first with the elapsed time as of now, the others as their
    /// snapshot recorded it, shared with every other watcher of the stopwatch.
    private func watchReply(_ name: String, _ snapshot: StopWatchSnapshot) -> [UInt8] {
        guard watch?.sentFirst == true else {
            watch?.sentFirst = true
            let stopwatch = Stopwatch(name: name, snapshot: snapshot, at: clock.now())
            return VarlinkReply(parameters: ["stopwatch": stopwatch.json], continues: true).message
        }
        return service.watchReplies.message(for: name, snapshot)
    }

    private func flush() {
        guard !isFlushing else { return }
        isFlushing = true
        defer { isFlushing = false }
        while !isClosed {
            while outputSent < output.count {
                let sent: Int
                do {
                    sent = try socket.send(output, from: outputSent)
                } catch where error == .wouldBlock {
                    waitForWritable()
                    return
                } catch {
                    logger.debug("connection \(id): write failed: \(error)")
                    close()
                    return
                }
                outputSent += sent
                outputStalledSince = nil
            }
            output.removeAll(keepingCapacity: output.count <= 64 * 1024)
            outputSent = 0
            // Drained: now the next update that waited, if any, then the calls that waited.
            if !closeWhenSent, let name = watch?.name, let next = watch?.backlog.removeFirst() {
                output.append(contentsOf: watchReply(name, next))
                continue
            }
            guard !unansweredCalls.isEmpty else { break }
            answerCalls()
            if output.isEmpty, unansweredCalls.isEmpty, watch?.backlog.isEmpty ?? true { break }
        }
        guard !isClosed else { return }
        stopWaitingForWritable()
        if closeWhenSent, unansweredCalls.isEmpty {
            close()
            return
        }
        resumeReading()
        updateDeadlines()
    }

    private func waitForWritable() {
        if outputStalledSince == nil { outputStalledSince = .now }
        if !isWriting {
            isWriting = true
            updateInterest()
        }
        updateDeadlines()
    }

    private func stopWaitingForWritable() {
        guard isWriting else { return }
        isWriting = false
        updateInterest()
    }

    private func updateInterest() {
        guard let pollToken else { return }
        var interest = SocketPoller.Interest()
        if isReading { interest.insert(.readable) }
        if isWriting { interest.insert(.writable) }
        poller.setInterest(interest, for: pollToken)
    }

    // MARK: Deadlines

    /// Nothing asked, nothing owed, nothing streamed: such a connection only holds a slot.
    private var isIdle: Bool {
        watch == nil && unansweredCalls.isEmpty && output.isEmpty && !framer.hasPartialMessage && !closeWhenSent
    }

    /// Arms one timer for the nearest deadline, or none when nothing is pending.
    private func updateDeadlines() {
        guard !isClosed else { return }
        let deadlines = [
            partialMessageSince.map { $0 + limits.messageTimeout },
            outputStalledSince.map { $0 + limits.writeTimeout },
            isIdle ? lastReceived + limits.idleTimeout : nil,
        ].compactMap { $0 }
        guard let nearest = deadlines.min() else {
            deadlineTimer?.cancel()
            deadlineTimer = nil
            armedDeadline = nil
            return
        }
        // Armed for no later than this already: it fires early, finds nothing due, and arms
        // for what is due then. (Re-arming on every call cost a timer update per call.)
        if let armedDeadline, armedDeadline <= nearest { return }
        armedDeadline = nearest
        if deadlineTimer == nil {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.deadlineReached() }
            deadlineTimer = timer
            timer.activate()
        }
        let delay = max(ContinuousClock.now.duration(to: nearest), .zero)
        deadlineTimer?.schedule(deadline: .now() + .nanoseconds(Int(delay.nanoseconds)), leeway: .milliseconds(100))
    }

    private func deadlineReached() {
        armedDeadline = nil
        guard !isClosed else { return }
        let now = ContinuousClock.now
        if let since = outputStalledSince, now - since >= limits.writeTimeout {
            logger.notice("connection \(id): disconnected, it read nothing for \(DurationText.string(limits.writeTimeout))")
            close()
        } else if let since = partialMessageSince, now - since >= limits.messageTimeout {
            partialMessageSince = nil
            fail("message left unfinished for \(DurationText.string(limits.messageTimeout))")
        } else if isIdle, now - lastReceived >= limits.idleTimeout {
            logger.debug("connection \(id): closed, no call for \(DurationText.string(limits.idleTimeout))")
            close()
        } else {
            updateDeadlines()
        }
    }

    // MARK: Closing

    func close() {
        guard !isClosed else { return }
        isClosed = true
        if let watch {
            service.registry.endWatching(watch.name, watcher: id)
        }
        watch = nil
        unansweredCalls = []
        deadlineTimer?.cancel()
        deadlineTimer = nil
        if let pollToken { poller.remove(pollToken) }
        socket.close()
        onClose(self)
    }
}
