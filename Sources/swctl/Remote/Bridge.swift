import LinuxSystem
import StopwatchdClient

/// `swctl bridge`: standard input to the daemon's socket and the socket to standard output,
/// both ways at once, until either side closes, adding nothing (the varlink bridge: a client
/// on another machine runs `ssh HOST swctl bridge` and speaks varlink over its pipes).
///
/// Standard input and output may be one socket (the Python varlink client passes one end
/// of a socketpair as both), pipes, or a terminal: they are never shut down or closed here,
/// nor made non-blocking (that flag would be shared with whoever else holds them). The
/// daemon's socket is ours, and non-blocking: input waits in a 64 KiB buffer while the
/// daemon does not read, and the daemon's output is still relayed meanwhile, so the bridge
/// adds no deadlock of its own. Writes to standard output block: a client that does not
/// read what it asked for stops the relay, as the daemon itself would stop answering it.
struct Bridge {
    let path: String

    static let bufferSize = 64 * 1024

    func run() -> Never {
        let socket: FileDescriptor
        do {
            socket = try SocketTransport.connect(to: path, waitingAtMost: .seconds(10))
            try socket.setNonBlocking()
        } catch let error as ClientError {
            Diagnostics.fail("swctl: \(error.swctlMessage)", status: error.exitStatus)
        } catch {
            Diagnostics.fail("swctl: cannot use the socket \(path): \(error)", status: 69)
        }
        let input = FileDescriptor.standardInput
        let output = FileDescriptor.standardOutput
        var pending: [UInt8] = []
        var inputOpen = true
        var buffer = [UInt8](repeating: 0, count: Self.bufferSize)
        while true {
            // Standard input only while there is room for what it brings; standard output
            // with no events, for its hang-up (a reader gone while the daemon says nothing).
            var requests: [(FileDescriptor, PollEvents)] = [(socket, pending.isEmpty ? .readable : [.readable, .writable])]
            requests.append((output, []))
            if inputOpen, pending.isEmpty { requests.append((input, .readable)) }
            let ready: [PollEvents]
            do {
                ready = try FileDescriptor.poll(events: requests, timeout: nil)
            } catch {
                Diagnostics.fail("swctl: bridge: \(error)", status: 70)
            }
            if ready[1].contains(.error) || ready[1].contains(.hangUp) {
                // Before anything else: with one socket as both, the peer's close is this
                // hang-up, and what it sent just before (a oneway call) may be unread yet.
                forwardRemainingInput(inputOpen ? input : nil, to: socket, pending: pending, through: &buffer)
                // Shut down to the daemon: only its answers are left, for a reader that is
                // gone unless standard output still takes them.
                pending = []
                inputOpen = false
                let stillHungUp = (try? FileDescriptor.poll(events: [(output, [])], timeout: .zero))
                    .map { $0[0].contains(.error) || $0[0].contains(.hangUp) } ?? true
                if stillHungUp { CurrentProcess.exit(0) }
                continue
            }
            if ready[0].contains(.readable) || ready[0].contains(.hangUp) || ready[0].contains(.error) {
                relayDaemonOutput(from: socket, to: output, through: &buffer)
            }
            if !pending.isEmpty, ready[0].contains(.writable) {
                do {
                    let sent = try socket.send(pending, from: 0)
                    pending.removeFirst(sent)
                } catch where error == .wouldBlock {
                } catch {
                    // The daemon stopped reading (it closed): what it still says is relayed,
                    // and its end ends the bridge.
                    pending = []
                    inputOpen = false
                }
                if !inputOpen, pending.isEmpty { try? socket.shutdownWriting() }
            }
            if requests.count > 2, !ready[2].isEmpty {
                let count = buffer.withUnsafeMutableBytes { bytes in (try? input.read(into: bytes)) ?? 0 }
                if count > 0 {
                    pending = Array(buffer[..<count])
                } else {
                    // End of input (or an input that fails, as good as ended): the daemon
                    // reads end-of-file, answers what it was sent, and closes.
                    inputOpen = false
                    try? socket.shutdownWriting()
                }
            }
        }
    }

    /// Sends the daemon `pending`, then what `input` (nil: at its end) holds now, to its end
    /// or until it has nothing ready, then shuts down writing to the daemon; its output
    /// meanwhile is read and dropped (nobody is left to take it), so that a daemon blocked
    /// on writing to us still reads. A daemon that went away ends it too.
    private func forwardRemainingInput(
        _ input: FileDescriptor?, to socket: FileDescriptor, pending: [UInt8], through buffer: inout [UInt8]
    ) {
        var pending = pending
        while true {
            if pending.isEmpty {
                guard let source = input, (try? source.poll(timeout: .zero)) == true else { break }
                let count = buffer.withUnsafeMutableBytes { bytes in (try? source.read(into: bytes)) ?? 0 }
                guard count > 0 else { break }
                pending = Array(buffer[..<count])
            }
            guard let ready = try? FileDescriptor.poll(events: [(socket, [.readable, .writable])], timeout: .seconds(10)),
                  !ready[0].isEmpty else { break }
            if ready[0].contains(.readable) || ready[0].contains(.hangUp) || ready[0].contains(.error) {
                let count = buffer.withUnsafeMutableBytes { bytes in Result { () throws(Errno) -> Int in try socket.read(into: bytes) } }
                switch count {
                case .success(0): CurrentProcess.exit(0)
                case .success, .failure(.wouldBlock): break
                case .failure: CurrentProcess.exit(0)
                }
            }
            if ready[0].contains(.writable) {
                do {
                    pending.removeFirst(try socket.send(pending, from: 0))
                } catch where error == .wouldBlock {
                } catch {
                    CurrentProcess.exit(0)
                }
            }
        }
        try? socket.shutdownWriting()
    }

    /// Reads what the daemon said and writes it all to standard output; exits 0 when the
    /// daemon closed, or when nobody reads standard output any more.
    private func relayDaemonOutput(from socket: FileDescriptor, to output: FileDescriptor, through buffer: inout [UInt8]) {
        let count: Int
        do {
            let result = buffer.withUnsafeMutableBytes { bytes in Result { () throws(Errno) -> Int in try socket.read(into: bytes) } }
            count = try result.get()
        } catch where error == .wouldBlock {
            return
        } catch where error == .connectionReset {
            CurrentProcess.exit(0)
        } catch {
            Diagnostics.fail("swctl: bridge: reading the daemon's socket failed: \(error)", status: 69)
        }
        guard count > 0 else { CurrentProcess.exit(0) }
        do {
            try output.writeAll(Array(buffer[..<count]))
        } catch where error == .brokenPipe || error == .connectionReset {
            CurrentProcess.exit(0)
        } catch {
            Diagnostics.fail("swctl: bridge: cannot write standard output: \(error)", status: 1)
        }
    }
}
