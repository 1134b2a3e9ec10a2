/// The deadlines one connection is held to, on the serving loop's clock: the timeout part
/// of a connection, as swift-nio's `IdleStateHandler` is of a channel. The connection says
/// what happened; this keeps one deadline scheduled with the loop, for the nearest instant,
/// and calls `reached` when it passes, for the connection to ask what expired.
///
/// Not thread-safe: it belongs to the server's queue, with its connection.
final class ConnectionDeadlines {
    enum Expiry: Equatable {
        /// The client took nothing of what it was sent for `writeTimeout`.
        case writeStalled
        /// A message stayed unfinished for `messageTimeout` while this end read.
        case messageUnfinished
        /// Nothing asked, nothing owed, nothing streamed for `idleTimeout`.
        case idle
    }

    let limits: ConnectionLimits
    private let loop: ServingLoop
    private let reached: () -> Void
    /// The deadline scheduled with `loop`, if any.
    private var scheduled: (token: ServingLoop.Token, at: Duration)?
    /// When the current unfinished message began, while this end reads.
    private var partialMessageSince: Duration?
    /// When output last stalled, while it stays stalled.
    private var outputStalledSince: Duration?
    /// When the client last sent anything.
    private var lastReceived: Duration

    init(limits: ConnectionLimits, loop: ServingLoop, reached: @escaping () -> Void) {
        self.limits = limits
        self.loop = loop
        self.reached = reached
        lastReceived = loop.now()
    }

    var now: Duration { loop.now() }

    func received(partialMessage: Bool, completedMessages: Bool) {
        let now = now
        lastReceived = now
        // The deadline is for the message now unfinished: a new one starts its own.
        if completedMessages || !partialMessage {
            partialMessageSince = partialMessage ? now : nil
        } else if partialMessageSince == nil {
            partialMessageSince = now
        }
    }

    /// While this end does not read, an unfinished message is not the client's doing: its
    /// deadline starts again when reading does.
    func reading(_ isReading: Bool, partialMessage: Bool) {
        partialMessageSince = isReading && partialMessage ? now : nil
    }

    /// The socket took no more: the stall starts now, or goes on if nothing was taken.
    func outputBlocked(progressed: Bool) {
        if progressed || outputStalledSince == nil { outputStalledSince = now }
    }

    func outputMoved() {
        outputStalledSince = nil
    }

    /// What is due now, the most pressing first. `isIdle`: nothing asked, owed or streamed.
    func expiry(isIdle: Bool) -> Expiry? {
        let now = now
        if let since = outputStalledSince, now - since >= limits.writeTimeout { return .writeStalled }
        if let since = partialMessageSince, now - since >= limits.messageTimeout { return .messageUnfinished }
        if isIdle, now - lastReceived >= limits.idleTimeout { return .idle }
        return nil
    }

    /// Keeps one deadline scheduled for the nearest, or none when nothing is pending.
    func update(isIdle: Bool) {
        // The earliest of three, without an array: this runs after every call.
        var nearest: Duration?
        func consider(_ deadline: Duration?) {
            guard let deadline else { return }
            if let earlier = nearest, earlier <= deadline { return }
            nearest = deadline
        }
        consider(partialMessageSince.map { $0 + limits.messageTimeout })
        consider(outputStalledSince.map { $0 + limits.writeTimeout })
        consider(isIdle ? lastReceived + limits.idleTimeout : nil)
        guard let nearest else {
            cancel()
            return
        }
        // Scheduled for no later than this already: it fires early, finds nothing due, and
        // schedules what is due then. (Rescheduling at every call cost a heap entry a call.)
        if let scheduled, scheduled.at <= nearest { return }
        cancel()
        let token = loop.schedule(at: nearest) { [weak self] in
            self?.scheduled = nil
            self?.reached()
        }
        scheduled = (token, nearest)
    }

    func cancel() {
        if let scheduled { loop.cancel(scheduled.token) }
        scheduled = nil
    }
}
