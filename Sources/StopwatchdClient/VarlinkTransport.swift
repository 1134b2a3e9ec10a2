/// How a `VarlinkConnection`'s bytes travel: a Unix socket (`SocketTransport`), or a child
/// process's pipes (`ChildProcessTransport`, for `ssh HOST swctl bridge`). Each turns its
/// failures into the `ClientError` that says what to do about them.
///
/// The connection calls `close` and `interrupt` under its lock, once `close` has run never
/// again; everything else from the one thread that uses the connection.
package protocol VarlinkTransport: AnyObject {
    /// Sends all of `bytes`.
    func send(_ bytes: [UInt8]) throws(ClientError)
    /// What came within `wait` (nil: for ever), at most `limit` bytes; nil when nothing did.
    /// The end of the stream (the daemon or the command closed it) is thrown.
    func receive(upTo limit: Int, waitingAtMost wait: Duration?) throws(ClientError) -> [UInt8]?
    /// The error for a failure the connection found itself (no reply in time, a daemon at
    /// its connection limit), with `reason`.
    func failure(_ reason: String) -> ClientError
    /// Makes a `receive` blocked on another thread return (with an error).
    func interrupt()
    /// Lets go of everything: descriptors, and a child process.
    func close()
}
