import Varlink

/// Where a `Connection` is in its life.
enum ConnectionPhase {
    /// Reading calls and answering them.
    case serving
    /// Writing the replies of a call made with `more`; a further call is a protocol error.
    case streaming(any VarlinkReplyStream)
    /// No more reading: the calls waiting are answered, the output is sent, then it closes
    /// (the client ended its input, or a protocol error is the last word).
    case closing
    case closed

    var readsCalls: Bool {
        switch self {
        case .serving, .streaming: true
        case .closing, .closed: false
        }
    }

    var isClosing: Bool { !readsCalls }

    var isClosed: Bool {
        if case .closed = self { true } else { false }
    }

    /// Cancels the stream, if one is written, and serves calls again.
    mutating func endStream() {
        guard case .streaming(let stream) = self else { return }
        stream.cancel()
        self = .serving
    }
}
