/// The replies to a call made with `more`, produced over time by the service and written by
/// the connection that serves the call, in the connection's own time: the connection pulls
/// the next one when its socket has taken the last, so a stream decides itself what waits
/// while a client is slow (merged, queued, or too much: an error that ends it).
///
/// Everything is called on the serving queue.
package protocol VarlinkReplyStream: AnyObject {
    /// Begins. `ready` is to be called whenever `next()` has something again after it
    /// returned nil.
    func start(ready: @escaping () -> Void)
    /// What to write next, or nil while nothing waits.
    func next() -> VarlinkStreamItem?
    /// The error that ends the stream, if it has come to one, taken ahead of the replies
    /// still waiting: the connection sends it as soon as what it holds is sent, and reads
    /// nothing more.
    func takeEnd() -> VarlinkError?
    /// Nothing more is pulled: the connection is closing, or the stream's `.last` has been
    /// written (only then, so a stream may count that reply as its own until the socket has
    /// taken it). Releases what the stream holds.
    func cancel()
    /// Whether it ends by itself, with a `.last` (a query's results), unlike a watch that
    /// goes on until the client leaves. Such a stream may also answer a call made without
    /// `more` (then it yields exactly one `.last`: the reply, or an error as
    /// `VarlinkReply(error).message`), and calls that follow it on the connection wait for
    /// its end instead of being refused. False by default: a call without `more` gets
    /// `ExpectedMore`, and a call during the stream ends the connection.
    var isFinite: Bool { get }
    /// Whether its reader may pause for as long as it likes: the stream then pauses too,
    /// holding no more than a bounded amount, so the connection keeps it (no write timeout).
    /// False by default: a reader that takes nothing for the write timeout is disconnected.
    var waitsForReader: Bool { get }
}

extension VarlinkReplyStream {
    package var isFinite: Bool { false }
    package var waitsForReader: Bool { false }
}

/// One thing a `VarlinkReplyStream` has to write.
package enum VarlinkStreamItem {
    /// A whole message (a reply with `continues`, NUL included); perhaps shared with other
    /// streams, so it is made once however many write it.
    case message([UInt8])
    /// The last reply (without `continues`): the stream is over, and the connection takes
    /// calls again.
    case last([UInt8])
    /// The last word: this error ends the stream, and the connection closes once it is sent.
    case end(VarlinkError)
}
