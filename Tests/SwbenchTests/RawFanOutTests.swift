import Glibc
import LinuxSystem
import Testing
import Varlink

@testable import swbench

/// The raw fan-out in a process of its own (`Benchmarks/c-client/raw-fanout.c`): the plan
/// swbench hands it, where its source is looked for, and the program itself, built and run
/// as swbench does.
struct RawFanOutTests {
    @Test func thePlanHoldsEachReplyInTheOrderSent() {
        let sockets = [FileDescriptor(rawValue: 7), FileDescriptor(rawValue: 1_000)]
        let messages: [[UInt8]] = [Array("first\0".utf8), Array("second!\0".utf8)]
        let plan = RawExpiries.plan(messages, to: sockets, at: [.nanoseconds(5_000_000_002), .nanoseconds(3)], in: [1, 0])
        func integer<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
            plan[offset..<(offset + MemoryLayout<T>.size)].withUnsafeBytes { $0.loadUnaligned(as: T.self) }
        }
        #expect(plan.count == 2 * 16 + messages[0].count + messages[1].count)
        #expect(integer(Int64.self, at: 0) == 3)
        #expect(integer(Int32.self, at: 8) == 1_000)
        #expect(integer(Int32.self, at: 12) == Int32(messages[1].count))
        #expect(Array(plan[16..<(16 + messages[1].count)]) == messages[1])
        let second = 16 + messages[1].count
        #expect(integer(Int64.self, at: second) == 5_000_000_002)
        #expect(integer(Int32.self, at: second + 8) == 7)
        #expect(integer(Int32.self, at: second + 12) == Int32(messages[0].count))
        #expect(Array(plan[(second + 16)...]) == messages[0])
    }

    @Test func itsSourceIsLookedForAsTheStatusClients() {
        #expect(
            CClient.sourceCandidates(.rawFanOut, option: nil, currentDirectory: "/here", invokedPath: "swbench", executablePath: "/repo/.build/release/swbench")
                == ["/here/Benchmarks/c-client/raw-fanout.c", "/repo/Benchmarks/c-client/raw-fanout.c", "/Benchmarks/c-client/raw-fanout.c"]
        )
        #expect(CClient.Program.rawFanOut.fileName == "raw-fanout.c")
    }

    /// Built and run as swbench does: three replies at three instants, each read whole on its
    /// own socket no earlier than its instant.
    @Test(.enabled(if: CPrograms.compiler != nil, "no C compiler (cc, or $CC) to build raw-fanout.c"))
    func theProgramWritesEachReplyAtItsInstant() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let program = try CPrograms.build(.rawFanOut, into: directory)
        let start = Now.boot()
        let instants: [Duration] = [.milliseconds(40), .milliseconds(20), .milliseconds(30)].map { start + $0 }
        let targets: [Duration] = [.seconds(1), .seconds(2), .seconds(3)]
        let delays = try RawExpiries.run(.countdowns, instants: instants, targets: targets, sender: .process(program, directory: directory.path))
        #expect(delays.count == 3, "one expired reply read on each socket")
        #expect(delays.values.allSatisfy { $0 >= 0 && $0 < 1_000 }, "each read after its instant: \(delays.values)")
    }

    /// Each socket gets its own reply, whole, and nothing else.
    @Test(.enabled(if: CPrograms.compiler != nil, "no C compiler (cc, or $CC) to build raw-fanout.c"))
    func eachSocketGetsItsOwnReply() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let program = try CPrograms.build(.rawFanOut, into: directory)
        var senders: [FileDescriptor] = [], receivers: [FileDescriptor] = []
        defer { (senders + receivers).forEach { $0.close() } }
        for _ in 0..<3 {
            var pair: [CInt] = [0, 0]
            try #require(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
            senders.append(FileDescriptor(rawValue: pair[0]))
            receivers.append(FileDescriptor(rawValue: pair[1]))
        }
        let messages = (0..<3).map { Array("reply \($0) \(String(repeating: "x", count: $0 * 100))\0".utf8) }
        let now = Now.boot()
        let planPath = directory.path + "/plan"
        let file = try FileDescriptor.open(planPath, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
        try file.writeAll(RawExpiries.plan(messages, to: senders, at: [now + .milliseconds(30), now + .milliseconds(10), now], in: [2, 1, 0]))
        file.close()
        let child = try ChildProcess(program.path, [planPath], errorPath: directory.path + "/log", inherited: senders)
        #expect(child.waitForExit() == 0)
        senders.forEach { $0.close() }
        senders = []
        for (index, receiver) in receivers.enumerated() {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(receiver.rawValue, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                received += buffer[..<count]
            }
            #expect(received == messages[index], "socket \(index)")
        }
    }

    @Test(.enabled(if: CPrograms.compiler != nil, "no C compiler (cc, or $CC) to build raw-fanout.c"))
    func aBadPlanIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let program = try CPrograms.build(.rawFanOut, into: directory)
        var pair: [CInt] = [0, 0]
        try #require(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue) | CInt(SOCK_NONBLOCK.rawValue), 0, &pair) == 0)
        let sender = FileDescriptor(rawValue: pair[0]), receiver = FileDescriptor(rawValue: pair[1])
        defer { sender.close(); receiver.close() }
        let reply = Array("x\0".utf8)
        let good = RawExpiries.plan([reply], to: [sender], at: [.nanoseconds(1)], in: [0])
        // After a good record (an instant long past: it would be sent at once): one whose
        // reply is cut short, one whose header is, one whose instant is not after boot.
        // Each plan refused with 2 before anything is sent.
        let plans = [
            good + Array(good.dropLast()),
            good + Array(good.prefix(10)),
            good + RawExpiries.plan([reply], to: [sender], at: [.zero], in: [0]),
        ]
        for (index, plan) in plans.enumerated() {
            let planPath = directory.path + "/plan\(index)"
            let file = try FileDescriptor.open(planPath, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
            try file.writeAll(plan)
            file.close()
            let child = try ChildProcess(program.path, [planPath], inherited: [sender])
            #expect(child.waitForExit() == 2, "plan \(index)")
            var byte: UInt8 = 0
            #expect(Glibc.read(receiver.rawValue, &byte, 1) == -1 && errno == EAGAIN, "plan \(index): nothing sent")
        }
        // The good plan alone is sent: the check above can see a reply.
        let planPath = directory.path + "/good"
        let file = try FileDescriptor.open(planPath, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
        try file.writeAll(good)
        file.close()
        #expect(try ChildProcess(program.path, [planPath], inherited: [sender]).waitForExit() == 0)
        var received = [UInt8](repeating: 0, count: 16)
        #expect(Glibc.read(receiver.rawValue, &received, received.count) == reply.count)
    }
}
