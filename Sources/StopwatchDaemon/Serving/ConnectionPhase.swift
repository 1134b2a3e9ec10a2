import Varlink

/// Where a `Connection` is in its life.
enum ConnectionPhase {
    /// Reading calls and answering them.
    case serving
    /// Writing the replies of a call made with `more`; a further call is a protocol error.
    case streaming(any VarlinkReplyStream)
    /// The client ended its input while a stream that ends by itself (History) was written:
    /// no more reading, the stream's replies are sent in full, then it goes on `closing`.
    case finishingStream(any VarlinkReplyStream)
    /// No more reading: the calls waiting are answered, the output is sent, then it closes
    /// (the client ended its input, or a protocol error is the last word).
    case closing
    case closed

    var readsCalls: Bool {
        switch self {
        case .serving, .streaming: true
        case .finishingStream, .closing, .closed: false
        }
    }

    /// Whether its last word is said: nothing but the output is left to send.
    var isClosing: Bool {
        switch self {
        case .closing, .closed: true
        case .serving, .streaming, .finishingStream: false
        }
    }

    var isClosed: Bool {
        if case .closed = self { true } else { false }
    }

    /// The stream whose replies are written, if any.
    var stream: (any VarlinkReplyStream)? {
        switch self {
        case .streaming(let stream), .finishingStream(let stream): stream
        case .serving, .closing, .closed: nil
        }
    }

    /// A stream's reply begins: written now when serving, or, once the input has ended, when
    /// the stream ends by itself (answered in full, SPEC §3). False: nobody may read it.
    mutating func begin(_ stream: any VarlinkReplyStream) -> Bool {
        switch self {
        case .serving: self = .streaming(stream)
        case .closing where stream.isFinite: self = .finishingStream(stream)
        case .closing, .streaming, .finishingStream, .closed: return false
        }
        return true
    }

    /// The client ended its input: what it asked is answered, then the connection closes; a
    /// stream that ends by itself goes on to its end, any other (a watch) ends now.
    mutating func inputEnded() {
        switch self {
        case .streaming(let stream) where stream.isFinite: self = .finishingStream(stream)
        case .serving, .streaming:
            endStream()
            self = .closing
        case .finishingStream, .closing, .closed: break
        }
    }

    /// The stream's last reply is taken: calls are served again (or it goes on closing). The
    /// stream is returned, not cancelled: its reply is still to be written.
    mutating func lastReplyTaken() -> (any VarlinkReplyStream)? {
        switch self {
        case .streaming(let stream):
            self = .serving
            return stream
        case .finishingStream(let stream):
            self = .closing
            return stream
        case .serving, .closing, .closed:
            return nil
        }
    }

    /// Cancels the stream, if one is written, and serves calls again (or goes on closing).
    mutating func endStream() {
        switch self {
        case .streaming(let stream):
            stream.cancel()
            self = .serving
        case .finishingStream(let stream):
            stream.cancel()
            self = .closing
        case .serving, .closing, .closed: break
        }
    }
}
