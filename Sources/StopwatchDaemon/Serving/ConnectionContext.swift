import LinuxSystem
import Varlink

/// What every connection of a server shares, made once by the server.
struct ConnectionContext {
    let loop: ServingLoop
    let service: VarlinkService
    let limits: ConnectionLimits
    let logger: Logger
    /// One buffer for every read: reads happen on the queue, one at a time.
    let readBuffer: UnsafeMutableRawBufferPointer
}

/// The limits each connection is held to.
struct ConnectionLimits: Sendable {
    var maximumMessageSize: Int
    /// How long a message may stay unfinished.
    var messageTimeout: Duration
    /// How long a client may go without taking any of what it is sent.
    var writeTimeout: Duration
    /// How long a connection that neither calls nor watches is kept.
    var idleTimeout: Duration
    /// Above this many unsent bytes the connection's input is not read, so a client that
    /// sends calls without reading replies cannot make the daemon buffer without end.
    var outputHighWater = 256 * 1024
}
