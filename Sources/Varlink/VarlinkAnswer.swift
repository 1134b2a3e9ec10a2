/// What a method gives back when it succeeds.
package enum VarlinkAnswer {
    /// One reply with these parameters.
    case reply(JSONObject)
    /// One reply already written: the bytes `VarlinkReply(parameters:).message` would be
    /// (its NUL included), from a writer that needs no tree (a stopwatch of 10,000 laps).
    case message([UInt8])
    /// Replies that come over time, for a call made with `more` (or one reply, for a stream
    /// that `isFinite`): the connection writes them as its socket takes them,
    /// until the stream ends or the connection does.
    case stream(any VarlinkReplyStream)
}
