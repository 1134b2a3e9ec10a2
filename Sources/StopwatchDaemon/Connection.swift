import LinuxSystem
import StopwatchProtocol
import Varlink

/// One client: moves its calls to the service and the answers back.
///
/// Calls are answered in order. The parts beside it keep the policies: `VarlinkFramer` cuts
/// messages, `OutputBuffer` holds what the socket has not taken (above its high water, no
/// more calls are answered, so none are read), `ConnectionDeadlines` times out unfinished
/// messages, stalled readers and idle connections. A call made with `more` hands the
/// connection a `VarlinkReplyStream`, whose replies it pulls one at a time as the socket
/// takes them; it takes no further calls then. Nothing here blocks: the socket is
/// non-blocking, served by the `ServingLoop` on the server's queue, where all of this runs.
final class Connection {
    /// What every connection of a server shares.
    struct Context {
        let loop: ServingLoop
        let service: VarlinkService
        let limits: ConnectionLimits
        let logger: Logger
        /// One buffer for every read: reads happen on the queue, one at a time.
        let readBuffer: UnsafeMutableRawBufferPointer
    }

    let id: Int
    private let socket: FileDescriptor
    private let context: Context
    private let onClose: (Connection) -> Void

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
    /// `pump` is running: a stream that has something then is pulled by it, not by a
    /// second `pump` inside the first (not a phase: a guard against reentry).
    private var isPumping = false

    init(id: Int, socket: FileDescriptor, context: Context, onClose: @escaping (Connection) -> Void) {
        self.id = id
        self.socket = socket
        self.context = context
        self.onClose = onClose
        framer = VarlinkFramer(maximumMessageSize: context.limits.maximumMessageSize)
        output = OutputBuffer(highWater: context.limits.outputHighWater)
    }

    private var loop: ServingLoop { context.loop }
    private var logger: Logger { context.logger }
    private var limits: ConnectionLimits { context.limits }

    /// Starts reading calls. On failure, nothing is started, and the caller closes the socket.
    func start() throws(Errno) {
        pollToken = try loop.add(socket, for: interest) { [weak self] ready in
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
            logger.debug("connection \(id): read failed: \(error)")
            close()
            return
        }
        guard count > 0 else {
            // The client is done sending: answer what it sent, then close.
            endStream()
            phase = .closing
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
            while output.hasRoom, !unansweredCalls.isEmpty, !isClosed {
                answer(unansweredCalls.removeFirst())
                // A stream's first reply goes before the answer to any later call.
                if case .streaming = phase { break }
            }
            if output.isEmpty, case .streaming(let stream) = phase, let item = stream.next() {
                switch item {
                case .message(let message): output.append(message)
                case .last(let message):
                    output.append(message)
                    endStream()
                case .end(let error): finish(with: error)
                }
            }
            guard !output.isEmpty, !isClosed else {
                if case .streaming = phase, !unansweredCalls.isEmpty, !isClosed { continue }
                break
            }
            let unsentBefore = output.unsentCount
            switch output.write(to: socket) {
            case .drained:
                deadlines.outputMoved()
                continue
            case .blocked:
                if output.unsentCount < unsentBefore { deadlines.outputMoved() }
                deadlines.outputBlocked()
            case .failed(let error):
                logger.debug("connection \(id): write failed: \(error)")
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

    private func answer(_ message: [UInt8]) {
        if case .streaming = phase {
            fail("this connection is streaming a reply and takes no further calls; use another connection")
            return
        }
        switch context.service.respond(to: message) {
        case .message(let reply): output.append(reply)
        case .nothing: break
        case .malformed(let reason): fail(reason)
        case .stream(let stream):
            // Closing: nobody may read it.
            guard case .serving = phase else {
                stream.cancel()
                return
            }
            phase = .streaming(stream)
            stream.start { [weak self] in self?.streamReady() }
        }
    }

    /// The stream has a reply again: written now if the socket is drained; otherwise it
    /// is pulled once it is.
    private func streamReady() {
        guard case .streaming(let stream) = phase else { return }
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
        logger.info("connection \(id): protocol error: \(reason)")
        finish(with: .protocolError(reason))
    }

    /// Sends `error` as the connection's last word, after what is queued already, and closes
    /// once it is sent. Calls that came after it are dropped.
    private func finish(with error: VarlinkError) {
        guard !phase.isClosing else { return }
        endStream()
        unansweredCalls = []
        phase = .closing
        output.append(VarlinkReply(error).message)
    }

    private func endStream() {
        guard case .streaming(let stream) = phase else { return }
        stream.cancel()
        phase = .serving
    }

    private func updateInterest() {
        guard let pollToken else { return }
        var wanted: ServingLoop.Interest = wantsInput ? .readable : []
        if !output.isEmpty { wanted.insert(.writable) }
        guard wanted != interest else { return }
        if interest.contains(.readable), !wanted.contains(.readable) { deadlines.readingPaused() }
        if !interest.contains(.readable), wanted.contains(.readable) {
            deadlines.readingResumed(partialMessage: framer.hasPartialMessage)
        }
        interest = wanted
        loop.setInterest(wanted, for: pollToken)
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
            logger.notice("connection \(id): disconnected, it read nothing for \(DurationText.string(limits.writeTimeout))")
            close()
        case .messageUnfinished?:
            deadlines.readingPaused()
            fail("message left unfinished for \(DurationText.string(limits.messageTimeout))")
            pump()
        case .idle?:
            logger.debug("connection \(id): closed, no call for \(DurationText.string(limits.idleTimeout))")
            close()
        case nil:
            deadlines.update(isIdle: isIdle)
        }
    }

    // MARK: Closing

    func close() {
        guard !isClosed else { return }
        endStream()
        phase = .closed
        unansweredCalls = []
        output.removeAll()
        deadlines.cancel()
        if let pollToken { loop.remove(pollToken) }
        socket.close()
        onClose(self)
    }
}
