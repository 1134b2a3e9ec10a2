import Glibc
import StopWatchCore
import Synchronization
import Testing

@Suite("client connections")
struct VarlinkConnectionTests {
    /// A failed connection once closed its socket twice: the second close could hit a file
    /// another thread had opened under the same number meanwhile. Here one thread fails to
    /// connect over and over while this one keeps opening pipes and checks they stay open.
    @Test("a failed connect closes its socket once, never someone else's descriptor")
    func failedConnectClosesOnce() async {
        let missing = "/tmp/stopwatchd-no-such-socket-\(getpid())"
        let done = Atomic(false)
        let connecting = Task.detached {
            for _ in 0..<10_000 {
                #expect(throws: ClientError.self) { try VarlinkConnection(path: missing, timeout: .seconds(1)) }
            }
            done.store(true, ordering: .releasing)
        }
        var closedUnderUs = 0
        while !done.load(ordering: .acquiring), closedUnderUs == 0 {
            var ends: [CInt] = [0, 0]
            guard pipe(&ends) == 0 else { break }
            for end in ends where fcntl(end, F_GETFD) == -1 { closedUnderUs += 1 }
            ends.forEach { _ = close($0) }
        }
        await connecting.value
        #expect(closedUnderUs == 0, "a pipe of ours was closed by a failed connection")
    }
}
