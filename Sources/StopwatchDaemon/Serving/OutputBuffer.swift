import LinuxSystem

/// What a connection has to send and the socket has not taken yet: the back-pressure part
/// of a connection. Above `highWater` unsent bytes the connection answers no more calls
/// (and so reads none), so a client that sends without reading cannot make the daemon
/// buffer without end.
struct OutputBuffer {
    enum WriteResult {
        /// Everything was sent.
        case drained
        /// The socket takes no more now: wait until it is writable.
        case blocked
        case failed(Errno)
    }

    let highWater: Int
    private var bytes: [UInt8] = []
    private var sent = 0

    init(highWater: Int) {
        self.highWater = highWater
    }

    var isEmpty: Bool { sent == bytes.count }
    var unsentCount: Int { bytes.count - sent }
    var hasRoom: Bool { unsentCount <= highWater }

    mutating func append(_ message: [UInt8]) {
        // Into an empty buffer a message is taken as it is, not copied: a History reply is a
        // megabyte or more, and a copy of it was as much memory again.
        if bytes.isEmpty {
            bytes = message
        } else {
            bytes.append(contentsOf: message)
        }
    }

    /// Sends as much as `socket` takes now.
    mutating func write(to socket: FileDescriptor) -> WriteResult {
        while sent < bytes.count {
            do {
                sent += try socket.send(bytes, from: sent)
            } catch where error == .wouldBlock {
                // A client that always lags a little never drains it: drop what was sent
                // once it is large, so the buffer holds only what is still to go.
                if sent > highWater {
                    bytes.removeFirst(sent)
                    sent = 0
                }
                return .blocked
            } catch {
                return .failed(error)
            }
        }
        // Kept for the next replies, unless a burst made it large.
        bytes.removeAll(keepingCapacity: bytes.count <= 64 * 1024)
        sent = 0
        return .drained
    }

    /// Drops what was not sent yet.
    mutating func removeAll() {
        bytes.removeAll()
        sent = 0
    }
}
