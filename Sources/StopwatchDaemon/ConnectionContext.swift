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
