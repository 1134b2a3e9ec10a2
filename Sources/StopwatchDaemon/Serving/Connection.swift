import LinuxSystem
import StopwatchProtocol
import Varlink

/// One client: moves its calls to the service and the answers back, in order. Its parts keep
/// the policies: `VarlinkFramer` cuts messages, `OutputBuffer` holds what the socket has not
/// taken (above its high water no call is answered, so none is read), `ConnectionDeadlines`
/// times out unfinished messages, stalled readers and idle connections. A call with `more`
/// hands it a `VarlinkReplyStream`, whose replies it pulls as the socket takes them. Nothing
/// blocks: the socket is non-blocking, served by the `ServingLoop` on the server's queue.
final class Connection {
    let id: Int
    private let socket: FileDescriptor
    private let context: ConnectionContext
    private let onClose: (Connection) -> Void

    /// Where it is in its life. The other mutable properties are data beside it (what is
    /// received, what the output holds) or a reentrancy guard, none a phase.
    private var phase = ConnectionPhase.serving
    private var framer: VarlinkFramer
    private var output: OutputBuffer
    /// Calls received but not answered yet, oldest first.
    private var unansweredCalls: [[UInt8]] = []
    /// Lazy: it calls back into the connection, which is whole only after `init`.
    private lazy var deadlines = ConnectionDeadlines(limits: context.limits, loop: context.loop) { [weak self] in
        self?.deadlineReached()
    }
    /// The socket's registration with `loop`, once `start` made it, and what it asks for.
    private var pollToken: ServingLoop.Token?
    private var interest: ServingLoop.Interest = .readable
    /// `pump` runs: a stream ready then is pulled by it, not by a `pump` inside it. A
    /// reentrancy guard (a stream may say it is ready from inside a call `pump` makes), not
    /// a phase.
    private var isPumping = false
    /// A stream whose last reply is in the output: cancelled once the output is written, so
    /// that what it counts for that reply (History's memory budget) is given back only when
    /// the socket has taken it. Says what the output holds, not a phase: `phase` has moved
    /// on (serving, or closing) when the last reply is taken, and either may be writing it.
    private var streamWritingLast: (any VarlinkReplyStream)?
    /// Everything unsent is a stream's reply: `pullStream` put it into an empty output, and
    /// nothing was added after it. Only then may the write timeout spare a paused reader.
    /// Says what the output holds, not a phase: each append and each drain changes it.
    private var outputHoldsOnlyStreamReply = false

    init(id: Int, socket: FileDescriptor, context: ConnectionContext, onClose: @escaping (Connection) -> Void) {
        self.id = id
        self.socket = socket
        self.context = context
        self.onClose = onClose
        framer = VarlinkFramer(maximumMessageSize: context.limits.maximumMessageSize)
        output = OutputBuffer(highWater: context.limits.outputHighWater)
    }

    /// Starts reading calls. On failure, nothing is started, and the caller closes the socket.
    func start() throws(Errno) {
        pollToken = try context.loop.add(socket, for: interest) { [weak self] ready in
            guard let self else { return }
            if ready.contains(.readable) { self.readAvailable() }
            if ready.contains(.writable), !self.isClosed { self.pump() }
        }
        deadlines.update(isIdle: isIdle)
    }

    var isClosed: Bool { phase.isClosed }

    // MARK: Reading

    private func readAvailable() {
        guard wantsInput else { return }
        let count: Int
        do {
            count = try socket.read(into: context.readBuffer)
        } catch where error == .wouldBlock {
            return
        } catch {
            context.logger.debug("connection \(id): read failed: \(error)")
            close()
            return
        }
        guard count > 0 else {
            // The client is done sending: answer what it sent (History in full), then close.
            phase.inputEnded()
            pump()
            return
        }
        let messages: [[UInt8]]
        do {
            messages = try framer.append(UnsafeRawBufferPointer(rebasing: context.readBuffer[..<count]))
        } catch {
            fail("message larger than \(error.limit) bytes")
            pump()
            return
        }
        deadlines.received(partialMessage: framer.hasPartialMessage, completedMessages: !messages.isEmpty)
        unansweredCalls.append(contentsOf: messages)
        pump()
    }

    /// Streaming the replies of a call that ends by itself, its last reply written or not:
    /// later calls wait, not refused. Answered only once that reply is written, their
    /// replies never share the output with the stream's (see `outputWaitsForPausedReader`).
    private var isAwaitingFiniteStream: Bool {
        streamWritingLast != nil || (phase.stream?.isFinite ?? false)
    }

    /// Whether the output waits for a reader that may pause as long as it likes: all it
    /// holds is a reply of a stream whose memory the budget bounds (History's). Plain
    /// replies (to calls sent before or after the stream's) are not: see `pump`.
    private var outputWaitsForPausedReader: Bool {
        outputHoldsOnlyStreamReply && ((phase.stream ?? streamWritingLast)?.waitsForReader ?? false)
    }

    /// Reads while serving or streaming, and only when no call waits for an answer.
    private var wantsInput: Bool { phase.readsCalls && unansweredCalls.isEmpty }

    // MARK: Answering and writing

    /// Answers waiting calls while the output has room, pulls the stream's next reply once
    /// the output is drained, and writes, until the socket takes no more or nothing is left.
    private func pump() {
        guard !isPumping else { return }
        isPumping = true
        defer { isPumping = false }
        while !isClosed {
            pullStream()
            // Calls behind a stream that ends by itself (History) wait for its end.
            while output.hasRoom, !unansweredCalls.isEmpty, !isClosed, !isAwaitingFiniteStream {
                answer(unansweredCalls.removeFirst())
                // A stream's first reply goes before the answer to any later call.
                if phase.stream != nil { break }
            }
            pullStream()
            // Nothing to write: a call that waits behind a stream's first reply not come yet
            // is answered once it comes (`streamReady`).
            guard !output.isEmpty, !isClosed else { break }
            let unsentBefore = output.unsentCount
            switch output.write(to: socket) {
            case .drained:
                deadlines.outputMoved()
                outputHoldsOnlyStreamReply = false
                lastReplyWritten()
                continue
            case .blocked:
                // The write timeout ends a client that takes nothing of what it is sent: a
                // watcher (its events would pile up, SPEC §3), or one that called and does
                // not read (it holds a slot, and up to the high water of output, for
                // nothing). Not a History reader that pauses (`swctl log | less` left
                // open) while the output holds only its stream's reply: the stream pauses
                // with it, within the daemon's memory budget, and it takes the rest when it
                // reads again (SPEC §3). Replies to other calls are outside that budget.
                if outputWaitsForPausedReader {
                    deadlines.outputMoved()
                } else {
                    deadlines.outputBlocked(progressed: output.unsentCount < unsentBefore)
                }
            case .failed(let error):
                context.logger.debug("connection \(id): write failed: \(error)")
                close()
                return
            }
            break
        }
        if case .closing = phase, unansweredCalls.isEmpty, output.isEmpty {
            close()
            return
        }
        guard !isClosed else { return }
        updateInterest()
        deadlines.update(isIdle: isIdle)
    }

    /// The stream's next reply, taken once the output is drained: what waits meanwhile is
    /// the stream's to merge or queue.
    private func pullStream() {
        guard output.isEmpty, let stream = phase.stream, let item = stream.next() else { return }
        switch item {
        case .message(let message):
            output.append(message)
            outputHoldsOnlyStreamReply = true
        case .last(let message):
            output.append(message)
            outputHoldsOnlyStreamReply = true
            streamWritingLast = phase.lastReplyTaken()
        case .end(let error): finish(with: error)
        }
    }

    /// The output is written: a stream whose last reply it held is done.
    private func lastReplyWritten() {
        streamWritingLast?.cancel()
        streamWritingLast = nil
    }

    private func answer(_ message: [UInt8]) {
        if phase.stream != nil {
            fail("this connection is streaming a reply and takes no further calls; use another connection")
            return
        }
        switch context.service.respond(to: message) {
        case .message(let reply):
            output.append(reply)
            outputHoldsOnlyStreamReply = false
        case .nothing: break
        case .malformed(let reason): fail(reason)
        case .stream(let stream):
            guard phase.begin(stream) else {
                // Closing, and not a stream that ends by itself: nobody may read it.
                stream.cancel()
                return
            }
            stream.start { [weak self] in self?.streamReady() }
        }
    }

    /// The stream has a reply again: written now if the socket is drained; otherwise it
    /// is pulled once it is.
    private func streamReady() {
        guard let stream = phase.stream else { return }
        if output.isEmpty {
            pump()
        } else if let end = stream.takeEnd() {
            // Nothing may follow the last word: no more reading, no more replies.
            finish(with: end)
            updateInterest()
        }
    }

    /// Answers with `ProtocolError` and closes once that is sent.
    private func fail(_ reason: String) {
        // Once closing, the first error stands (a deadline may still fire while it drains).
        guard !phase.isClosing else { return }
        context.logger.info("connection \(id): protocol error: \(reason)")
        finish(with: .protocolError(reason))
    }

    /// Sends `error` as the connection's last word, after what is queued already, and closes
    /// once it is sent. Calls that came after it are dropped.
    private func finish(with error: VarlinkError) {
        guard !phase.isClosing else { return }
        phase.endStream()
        unansweredCalls = []
        phase = .closing
        output.append(VarlinkReply(error).message)
        outputHoldsOnlyStreamReply = false
    }

    private func updateInterest() {
        guard let pollToken else { return }
        var wanted: ServingLoop.Interest = wantsInput ? .readable : []
        if !output.isEmpty { wanted.insert(.writable) }
        guard wanted != interest else { return }
        let reads = wanted.contains(.readable)
        if reads != interest.contains(.readable) { deadlines.reading(reads, partialMessage: framer.hasPartialMessage) }
        interest = wanted
        context.loop.setInterest(wanted, for: pollToken)
    }

    // MARK: Deadlines

    /// Nothing asked, nothing owed, nothing streamed: such a connection only holds a slot.
    private var isIdle: Bool {
        guard case .serving = phase else { return false }
        return unansweredCalls.isEmpty && output.isEmpty && !framer.hasPartialMessage
    }

    private func deadlineReached() {
        guard !isClosed else { return }
        switch deadlines.expiry(isIdle: isIdle) {
        case .writeStalled?:
            context.logger.notice("connection \(id): disconnected, it read nothing for \(DurationText.string(context.limits.writeTimeout))")
            close()
        case .messageUnfinished?:
            fail("message left unfinished for \(DurationText.string(context.limits.messageTimeout))")
            pump()
        case .idle?:
            context.logger.debug("connection \(id): closed, no call for \(DurationText.string(context.limits.idleTimeout))")
            close()
        case nil:
            deadlines.update(isIdle: isIdle)
        }
    }

    // MARK: Closing

    func close() {
        guard !isClosed else { return }
        phase.endStream()
        phase = .closed
        lastReplyWritten()
        unansweredCalls = []
        output.removeAll()
        deadlines.cancel()
        if let pollToken { context.loop.remove(pollToken) }
        socket.close()
        onClose(self)
    }
}
