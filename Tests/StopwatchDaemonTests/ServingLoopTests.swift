import Dispatch
import Glibc
import LinuxSystem
@testable import StopwatchDaemon
import Testing

/// The daemon's serving loop, with socket pairs and deadlines. Nothing here sleeps: each wait ends as soon
/// as the handler it waits for runs, and what must not happen is checked once a later event,
/// queued behind it, has been handled.
@Suite("serving loop")
struct ServingLoopTests {
    /// A loop serving its own queue, with a log of which handler saw what.
    final class Fixture: Sendable {
        let queue = DispatchQueue(label: "serving-loop-test")
        let loop: ServingLoop
        let seen = Locked<[String]>([])
        private let arrived = DispatchSemaphore(value: 0)

        init() throws {
            let seen = self.seen
            loop = try ServingLoop(queue: queue, logger: Logger(minimumLevel: .error, journald: false) { _ in }) { failure in
                seen.withLock { $0.append("failure: \(failure)") }
            }
        }

        deinit {
            queue.sync { loop.stop() }
        }

        /// Adds `socket`; its handler logs `name` and what was ready, and drains what it can read.
        func add(_ socket: FileDescriptor, _ name: String, for interest: ServingLoop.Interest) -> ServingLoop.Token {
            queue.sync {
                try! loop.add(socket, for: interest) { [seen, arrived] ready in
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    if ready.contains(.readable) { _ = buffer.withUnsafeMutableBytes { try? socket.read(into: $0) } }
                    seen.withLock { $0.append("\(name) \(ready.contains(.readable) ? "r" : "")\(ready.contains(.writable) ? "w" : "")") }
                    arrived.signal()
                }
            }
        }

        /// Waits until some handler has logged `name`.
        func waitFor(_ entry: String) -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while !seen.withLock({ $0.contains(entry) }) {
                guard ContinuousClock.now < deadline else { return false }
                _ = arrived.wait(timeout: .now() + .milliseconds(100))
            }
            return true
        }

        func count(_ entry: String) -> Int { seen.withLock { $0.filter { $0 == entry }.count } }
    }

    static func pair() -> (FileDescriptor, FileDescriptor) {
        var descriptors: [CInt] = [0, 0]
        precondition(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue), 0, &descriptors) == 0)
        return (FileDescriptor(rawValue: descriptors[0]), FileDescriptor(rawValue: descriptors[1]))
    }

    @Test("a readable socket is reported on the queue; after remove never again, its number reused or not")
    func readableThenRemoved() throws {
        let fixture = try Fixture()
        let (a, b) = Self.pair()
        defer { b.close() }
        let token = fixture.add(a, "a", for: .readable)
        _ = try b.writeAll(Array("x".utf8))
        #expect(fixture.waitFor("a r"))
        // Readable again, then removed, closed, and its number most likely taken by the next
        // socket made (tests run in parallel), readable at once.
        _ = try b.writeAll(Array("y".utf8))
        let reportsOfA = fixture.queue.sync {
            fixture.loop.remove(token)
            return fixture.count("a r")
        }
        a.close()
        let (c, d) = Self.pair()
        defer { c.close(); d.close() }
        _ = fixture.add(c, "c", for: .readable)
        _ = try d.writeAll(Array("z".utf8))
        #expect(fixture.waitFor("c r"))
        #expect(fixture.count("a r") == reportsOfA)
        #expect(fixture.count("c r") == 1)
        #expect(fixture.seen.withLock { !$0.contains { $0.hasPrefix("failure") } })
    }

    @Test("interest narrowed to nothing: not reported; widened again: reported")
    func narrowedAndWidened() throws {
        let fixture = try Fixture()
        let (a, b) = Self.pair()
        defer { a.close(); b.close() }
        let token = fixture.add(a, "a", for: .readable)
        fixture.queue.sync { fixture.loop.setInterest([], for: token) }
        _ = try b.writeAll(Array("x".utf8))
        // A second socket, readable after a's data was written: once it is reported, a
        // report of `a` would have been too.
        let (c, d) = Self.pair()
        defer { c.close(); d.close() }
        _ = fixture.add(c, "c", for: .readable)
        _ = try d.writeAll(Array("z".utf8))
        #expect(fixture.waitFor("c r"))
        #expect(fixture.count("a r") == 0)
        fixture.queue.sync { fixture.loop.setInterest(.readable, for: token) }
        #expect(fixture.waitFor("a r"))
    }

    @Test("writable when asked for; a hang-up is reported to a reader, which then reads the end")
    func writableAndHangUp() throws {
        let fixture = try Fixture()
        let (a, b) = Self.pair()
        defer { a.close() }
        let token = fixture.add(a, "a", for: [])
        fixture.queue.sync { fixture.loop.setInterest([.readable, .writable], for: token) }
        #expect(fixture.waitFor("a w"))
        fixture.queue.sync { fixture.loop.setInterest(.readable, for: token) }
        b.close()
        #expect(fixture.waitFor("a r"))
    }

    @Test("deadlines run on the queue, nearest first; a cancelled one never runs")
    func deadlines() throws {
        let fixture = try Fixture()
        let done = DispatchSemaphore(value: 0)
        fixture.queue.sync {
            let loop = fixture.loop
            let now = loop.now()
            let seen = fixture.seen
            _ = loop.schedule(at: now + .milliseconds(40)) {
                seen.withLock { $0.append("late") }
                done.signal()
            }
            let cancelled = loop.schedule(at: now + .milliseconds(10)) { seen.withLock { $0.append("cancelled") } }
            _ = loop.schedule(at: now + .milliseconds(20)) { seen.withLock { $0.append("early") } }
            loop.cancel(cancelled)
        }
        #expect(done.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(fixture.seen.withLock { $0 } == ["early", "late"])
    }

    @Test("a LoopTimer fires in the loop, on the queue, from the loop's own thread (as a socket's handler runs), with its deadline; cancelled, never again")
    func loopTimer() throws {
        let fixture = try Fixture()
        let (a, b) = Self.pair()
        defer { a.close(); b.close() }
        let threads = Locked<[String: ThreadIdentity]>([:])
        _ = fixture.queue.sync {
            try! fixture.loop.add(a, for: .readable) { [seen = fixture.seen] _ in
                var buffer = [UInt8](repeating: 0, count: 16)
                _ = buffer.withUnsafeMutableBytes { try? a.read(into: $0) }
                threads.withLock { $0["socket"] = ThreadIdentity.current }
                seen.withLock { $0.append("socket") }
            }
        }
        _ = try b.writeAll(Array("x".utf8))
        #expect(fixture.waitFor("socket"))
        let fired = DispatchSemaphore(value: 0)
        let deadlines = Locked<[Duration]>([])
        let timer = fixture.queue.sync {
            try! LoopTimer(clock: .monotonic, loop: fixture.loop, queue: fixture.queue) { [queue = fixture.queue] _, deadline in
                dispatchPrecondition(condition: .onQueue(queue))
                threads.withLock { $0["timer"] = ThreadIdentity.current }
                deadlines.withLock { $0.append(deadline) }
                fired.signal()
            }
        }
        let deadline = Posix.clockTime(.monotonic) + .milliseconds(5)
        timer.schedule(at: deadline, now: Posix.clockTime(.monotonic))
        #expect(fired.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(deadlines.withLock { $0 } == [deadline])
        #expect(threads.withLock { $0["timer"] != nil && $0["timer"] == $0["socket"] })
        // Cancelled while armed: its instant passes, and a socket event queued after it is
        // handled, without it.
        fixture.queue.sync {
            timer.schedule(at: Posix.clockTime(.monotonic), now: Posix.clockTime(.monotonic))
            timer.cancel()
        }
        _ = try b.writeAll(Array("y".utf8))
        let until = ContinuousClock.now + .seconds(10)
        while fixture.count("socket") < 2, ContinuousClock.now < until { _ = fired.wait(timeout: .now() + .milliseconds(20)) }
        #expect(fixture.count("socket") == 2)
        #expect(deadlines.withLock { $0.count } == 1)
    }
}
