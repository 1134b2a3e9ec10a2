import Glibc
import LinuxSystem
import Varlink

/// Reads the messages of many watch connections as they come, noting when each arrived:
/// two threads, each polling half of the connections (not a thread per watcher).
final class WatcherReader {
    private let threads: [BenchThread<Harvest>]
    private let deadline = Locked<Duration?>(nil)

    /// What one reading thread collected.
    struct Harvest: Sendable {
        var deliveries: [Delivery] = []
        /// Connections the other end closed.
        var closed = 0
    }

    /// Starts reading `connections` (blocking sockets; watcher `i` is `connections[i]`).
    init(_ connections: [FileDescriptor], threads count: Int = 2) {
        let share = (connections.count + count - 1) / max(count, 1)
        let deadline = self.deadline
        threads = stride(from: 0, to: connections.count, by: max(share, 1)).map { first in
            let part = Array(connections[first..<min(first + share, connections.count)])
            return BenchThread { Self.read(part, firstWatcher: first, until: deadline) }
        }
    }

    /// Reads on until `deadline` (boot clock), then returns everything read.
    func finish(at deadline: Duration) -> Harvest {
        self.deadline.withLock { $0 = deadline }
        var all = Harvest()
        for thread in threads {
            let harvest = thread.join()
            all.deliveries += harvest.deliveries
            all.closed += harvest.closed
        }
        return all
    }

    private static func read(_ connections: [FileDescriptor], firstWatcher: Int, until deadline: Locked<Duration?>) -> Harvest {
        var entries = connections.map { pollfd(fd: $0.rawValue, events: Int16(POLLIN), revents: 0) }
        var framers = Array(repeating: VarlinkFramer(maximumMessageSize: 1 << 16), count: connections.count)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var harvest = Harvest()
        harvest.deliveries.reserveCapacity(connections.count * 32)
        while true {
            // Polled in slices of at most 100 ms, so a deadline set meanwhile is seen.
            var timeout: CInt = 100
            if let end = deadline.withLock({ $0 }) {
                let remaining = end - Now.boot()
                guard remaining > .zero else { break }
                timeout = CInt(min(remaining.inMilliseconds.rounded(.up), 100))
            }
            guard poll(&entries, nfds_t(entries.count), timeout) > 0 else { continue }
            for index in entries.indices where entries[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(entries[index].fd, $0.baseAddress, $0.count) }
                let received = Now.boot()
                guard count > 0 else {
                    // Closed (or failed): a negative descriptor is one poll leaves out.
                    entries[index].fd = -1
                    harvest.closed += 1
                    continue
                }
                let messages = (try? buffer.withUnsafeBytes { try framers[index].append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }) ?? []
                for message in messages {
                    harvest.deliveries.append(Delivery(watcher: firstWatcher + index, received: received, message: message))
                }
            }
        }
        return harvest
    }
}
