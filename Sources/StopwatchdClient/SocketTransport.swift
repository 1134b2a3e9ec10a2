import LinuxSystem
import StopwatchProtocol

/// A connection's bytes on a Unix stream socket: the daemon's, on this machine.
package final class SocketTransport: VarlinkTransport {
    package let path: String
    private let socket: FileDescriptor

    /// Connects to `path`, waiting at most `timeout` for a daemon whose backlog is full.
    package init(path: String, timeout: Duration) throws(ClientError) {
        self.path = path
        // Stored only once connected: were `self.socket` set before a throw, `deinit` would
        // run and close the descriptor a second time, by then maybe another thread's file.
        socket = try Self.connect(to: path, waitingAtMost: timeout)
    }

    /// A blocking socket connected to `path`: for `swctl bridge`, which relays it as it is.
    package static func connect(to path: String, waitingAtMost timeout: Duration) throws(ClientError) -> FileDescriptor {
        let socket: FileDescriptor
        do {
            socket = try FileDescriptor.unixStreamSocket(nonBlocking: true)
        } catch {
            throw .unreachable(path: path, reason: "cannot create a socket: \(error)")
        }
        // Non-blocking, so a daemon whose backlog is full cannot hang us: retry until the deadline.
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                try socket.connect(toPath: path)
                try socket.setNonBlocking(false)
                return socket
            } catch where error == .wouldBlock && ContinuousClock.now < deadline {
                CurrentProcess.sleep(for: .milliseconds(5))
            } catch {
                socket.close()
                switch error {
                case .permissionDenied, .notPermitted: throw .permissionDenied(path: path)
                case .wouldBlock: throw .unreachable(path: path, reason: "the daemon accepts no connections (its backlog is full)")
                default: throw .unreachable(path: path, reason: error.description)
                }
            }
        }
    }

    package func send(_ bytes: [UInt8]) throws(ClientError) {
        do {
            var sent = 0
            while sent < bytes.count {
                sent += try socket.send(bytes, from: sent)
            }
        } catch {
            throw .connectionClosed(path: path, reason: "sending failed: \(error)")
        }
    }

    package func receive(upTo limit: Int, waitingAtMost wait: Duration?) throws(ClientError) -> [UInt8]? {
        do {
            guard try socket.poll(timeout: wait) else { return nil }
        } catch {
            throw failure("\(error)")
        }
        let bytes: [UInt8]
        do {
            bytes = try socket.read(upTo: limit)
        } catch {
            // Connected: a daemon that resets the connection went away mid-answer.
            throw .connectionClosed(path: path, reason: "\(error)")
        }
        guard !bytes.isEmpty else { throw .connectionClosed(path: path, reason: "the daemon closed the connection") }
        return bytes
    }

    package func failure(_ reason: String) -> ClientError {
        .unreachable(path: path, reason: reason)
    }

    package func interrupt() {
        socket.shutdown()
    }

    package func close() {
        socket.close()
    }
}
