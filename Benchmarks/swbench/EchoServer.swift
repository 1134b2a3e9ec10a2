import Glibc
import LinuxSystem

/// The baseline for calls: one thread serving any number of Unix-socket clients with
/// `poll`, as the daemon's one queue does, answering each NUL-terminated request with a
/// fixed reply of the daemon's reply size — and doing nothing else.
final class EchoServer {
    let path: String
    private let thread: BenchThread<Int>
    private let stopRequested = Locked(false)

    /// Listens at `path`; each reply is `replySize` bytes, its NUL included.
    init(path: String, replySize: Int) throws(Errno) {
        self.path = path
        let listener = try FileDescriptor.unixStreamSocket(nonBlocking: true)
        try listener.bind(toPath: path)
        try listener.listen(backlog: 64)
        let reply = Self.reply(size: replySize)
        let stopRequested = self.stopRequested
        thread = BenchThread { Self.serve(listener: listener, reply: reply, until: stopRequested) }
    }

    /// Stops serving and returns how many requests it answered.
    @discardableResult
    func stop() -> Int {
        stopRequested.withLock { $0 = true }
        let answered = thread.join()
        try? FileSystem.remove(path)
        return answered
    }

    /// `{"parameters":{"echo":"xxx…"}}` and a NUL, `size` bytes in all.
    static func reply(size: Int) -> [UInt8] {
        let head = Array(#"{"parameters":{"echo":""#.utf8), tail = Array(#""}}"#.utf8)
        let padding = max(size - head.count - tail.count - 1, 0)
        return head + [UInt8](repeating: UInt8(ascii: "x"), count: padding) + tail + [0]
    }

    private static func serve(listener: FileDescriptor, reply: [UInt8], until stopRequested: Locked<Bool>) -> Int {
        var clients: [FileDescriptor] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var answered = 0
        defer {
            clients.forEach { $0.close() }
            listener.close()
        }
        while !stopRequested.withLock({ $0 }) {
            var entries = [pollfd(fd: listener.rawValue, events: Int16(POLLIN), revents: 0)]
                + clients.map { pollfd(fd: $0.rawValue, events: Int16(POLLIN), revents: 0) }
            guard poll(&entries, nfds_t(entries.count), 50) > 0 else { continue }
            if entries[0].revents != 0, let client = try? listener.accept() {
                // Blocking from here on: a reply is small, and the client reads it at once.
                try? client.setNonBlocking(false)
                clients.append(client)
            }
            var closed: Set<CInt> = []
            for entry in entries.dropFirst() where entry.revents != 0 {
                let client = FileDescriptor(rawValue: entry.fd)
                let count = (try? buffer.withUnsafeMutableBytes { (bytes) throws(Errno) in try client.read(into: bytes) }) ?? 0
                guard count > 0 else {
                    closed.insert(entry.fd)
                    continue
                }
                // One reply per request ended in this read.
                for _ in 0..<buffer[..<count].count(where: { $0 == 0 }) {
                    guard (try? client.writeAll(reply)) != nil else {
                        closed.insert(entry.fd)
                        break
                    }
                    answered += 1
                }
            }
            for client in clients where closed.contains(client.rawValue) { client.close() }
            clients.removeAll { closed.contains($0.rawValue) }
        }
        return answered
    }
}
