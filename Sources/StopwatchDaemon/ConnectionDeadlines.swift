/// The deadlines one connection is held to, on the serving loop's clock: the timeout part
/// of a connection, as swift-nio's `IdleStateHandler` is of a channel. It only keeps the
/// instants; the connection says what happened and asks what is due.
struct ConnectionDeadlines {
    enum Expiry: Equatable {
        /// The client took nothing of what it was sent for `writeTimeout`.
        case writeStalled
        /// A message stayed unfinished for `messageTimeout` while this end read.
        case messageUnfinished
        /// Nothing asked, nothing owed, nothing streamed for `idleTimeout`.
        case idle
    }

    let limits: ConnectionLimits
    /// When the current unfinished message began, while this end reads.
    private var partialMessageSince: Duration?
    /// When output last stalled, while it stays stalled.
    private var outputStalledSince: Duration?
    /// When the client last sent anything.
    private var lastReceived: Duration

    init(limits: ConnectionLimits, now: Duration) {
        self.limits = limits
        lastReceived = now
    }

    mutating func received(at now: Duration, partialMessage: Bool, completedMessages: Bool) {
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
    mutating func readingPaused() {
        partialMessageSince = nil
    }

    mutating func readingResumed(at now: Duration, partialMessage: Bool) {
        if partialMessage { partialMessageSince = now }
    }

    mutating func outputBlocked(at now: Duration) {
        if outputStalledSince == nil { outputStalledSince = now }
    }

    mutating func outputMoved() {
        outputStalledSince = nil
    }

    /// The nearest deadline, or nil when nothing is pending.
    func nearest(isIdle: Bool) -> Duration? {
        [
            partialMessageSince.map { $0 + limits.messageTimeout },
            outputStalledSince.map { $0 + limits.writeTimeout },
            isIdle ? lastReceived + limits.idleTimeout : nil,
        ].compactMap { $0 }.min()
    }

    /// What is due at `now`, the most pressing first.
    func expiry(at now: Duration, isIdle: Bool) -> Expiry? {
        if let since = outputStalledSince, now - since >= limits.writeTimeout { return .writeStalled }
        if let since = partialMessageSince, now - since >= limits.messageTimeout { return .messageUnfinished }
        if isIdle, now - lastReceived >= limits.idleTimeout { return .idle }
        return nil
    }
}
