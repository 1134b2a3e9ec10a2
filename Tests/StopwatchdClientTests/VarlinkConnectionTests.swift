import Foundation
import LinuxSystem
import StopwatchdClient
import Testing

@Suite("client connections")
struct VarlinkConnectionTests {
    /// A failed connection once closed its socket twice: the second close could hit a file
    /// another thread had opened under the same number meanwhile. Here one thread fails to
    /// connect over and over while another keeps opening pipes and checks they stay open.
    /// Both are threads of their own: spinning on the shared cooperative pool starved the
    /// other tests' tasks.
    @Test("a failed connect closes its socket once, never someone else's descriptor")
    func failedConnectClosesOnce() {
        let missing = "/tmp/stopwatchd-no-such-socket-\(getpid())"
        let done = Locked(false)
        let connected = Locked(0)
        let closedUnderUs = Locked(0)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for _ in 0..<10_000 where (try? VarlinkConnection(path: missing, timeout: .seconds(1))) != nil {
                connected.withLock { $0 += 1 }
            }
            done.withLock { $0 = true }
            finished.signal()
        }
        Thread.detachNewThread {
            while !done.withLock({ $0 }), closedUnderUs.withLock({ $0 }) == 0 {
                var ends: [CInt] = [0, 0]
                guard pipe(&ends) == 0 else { break }
                for end in ends where fcntl(end, F_GETFD) == -1 { closedUnderUs.withLock { $0 += 1 } }
                ends.forEach { _ = close($0) }
            }
            finished.signal()
        }
        finished.wait()
        finished.wait()
        #expect(connected.withLock { $0 } == 0, "a connection to a missing socket succeeded")
        #expect(closedUnderUs.withLock { $0 } == 0, "a pipe of ours was closed by a failed connection")
    }
}
