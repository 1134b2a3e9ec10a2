import Glibc
import LinuxSystem
import Testing
import Varlink

@testable import swbench

/// The baseline of calls (`Benchmarks/c-client/echo.c`) in a process of its own, and the
/// pinning of a round trip to one CPU.
struct EchoProcessTests {
    /// Each request, whole or in pieces, one at a time or several in one write, gets one reply
    /// of the size asked for, the same bytes as the thread echo's, and nothing more; on two
    /// connections at once.
    @Test(.enabled(if: CPrograms.compiler != nil, "no C compiler (cc, or $CC) to build echo.c"))
    func eachRequestGetsOneReplyOfTheSizeAsked() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let program = try CPrograms.build(.echo, into: directory)
        let echo = try EchoProcess(program: program, path: directory.path + "/echo.sock", replySize: 93, log: directory.path + "/echo.log")
        defer { echo.stop() }
        let first = try MessageConnection(path: echo.path), second = try MessageConnection(path: echo.path)
        defer {
            first.close()
            second.close()
        }
        let expected = EchoServer.reply(size: 93)
        // Half a request: no reply while the echo holds it (and, having waited, the other
        // half arrives in a read of its own).
        try first.send(Array(#"{"method":"#.utf8))
        #expect(try !first.descriptor.poll(timeout: .milliseconds(100)), "no reply to half a request")
        try first.send(Array(#""a"}"#.utf8) + [0])
        #expect(try first.receive() + [0] == expected, "one reply, the thread echo's bytes")
        try second.send(Array(#"{"method":"b"}"#.utf8) + [0] + Array(#"{"method":"c"}"#.utf8) + [0])
        #expect(try second.receive() + [0] == expected)
        #expect(try second.receive() + [0] == expected)
        for connection in [first, second] {
            #expect(!connection.hasPendingBytes)
            #expect(try !connection.descriptor.poll(timeout: .milliseconds(100)), "no reply more than the requests")
        }
        try echo.checkServing()
    }

    @Test(.enabled(if: CPrograms.compiler != nil, "no C compiler (cc, or $CC) to build echo.c"))
    func badArgumentsEndItWithTwo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let program = try CPrograms.build(.echo, into: directory)
        for arguments in [["3"], ["x", "93"], ["3", "0"], ["3", "93x"]] {
            let child = try ChildProcess(program.path, arguments)
            #expect(child.waitForExit() == 2, "\(arguments)")
        }
    }

    private static let allowsSeveralCPUs = ((try? CPUAffinity.of(thread: 0))?.cpus.count ?? 0) > 1

    /// Pinned, the calling thread and every thread of a process (this one, which has many) run
    /// on the one CPU; released, each has its affinity from before again.
    @Test(.enabled(if: allowsSeveralCPUs, "one CPU allowed: pinned and not would be the same"))
    func pinningHoldsEveryThreadOnOneCPUAndReleasesIt() throws {
        let process = getpid()
        let before = try CPUAffinity.of(thread: 0)
        let processBefore = try CPUAffinity.of(thread: process)
        let cpu = try Pinning.firstAllowedCPU()
        #expect(cpu == before.cpus.first)
        let threads = ProcFS.threadIDs(of: process)
        #expect(threads.count > 1)
        let pinning = try Pinning([process], on: cpu)
        var released = false
        defer { if !released { try? pinning.release() } }
        #expect(try CPUAffinity.of(thread: 0).cpus == [cpu])
        for thread in ProcFS.threadIDs(of: process) {
            #expect(try CPUAffinity.of(thread: thread).cpus == [cpu], "thread \(thread)")
        }
        try pinning.release()
        released = true
        #expect(try CPUAffinity.of(thread: 0) == before)
        for thread in ProcFS.threadIDs(of: process) {
            #expect(try CPUAffinity.of(thread: thread) == processBefore, "thread \(thread)")
        }
    }

    @Test func anAffinityIsItsCPUs() {
        #expect(CPUAffinity(cpus: [0, 9, 1023, 1024, -1]).cpus == [0, 9, 1023])
        #expect(CPUAffinity(cpus: []).cpus.isEmpty)
    }
}
