import Testing
@testable import StopwatchDaemon

/// The pool and queue of hook runs, driven alone: no process, no clock.
@Suite("hook pool and queue")
struct HookQueueTests {
    typealias Queue = HookQueue<Int>

    /// The jobs an action list starts, and its drop reports, in order.
    static func describe(_ actions: [Queue.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .start(let job): "start \(job)"
            case .startedDropping: "dropping"
            case .dropped(let count): "dropped \(count)"
            }
        }
    }

    @Test("at most 4 run; the others wait and start in order as slots free")
    func fourRunning() {
        var queue = Queue(maximumRunning: 4, maximumWaiting: 256)
        var started: [String] = []
        for job in 1...6 { started += Self.describe(queue.submit(job)) }
        #expect(started == ["start 1", "start 2", "start 3", "start 4"])
        #expect(queue.running == 4 && queue.waiting == 2)
        #expect(Self.describe(queue.finished()) == ["start 5"])
        #expect(Self.describe(queue.finished()) == ["start 6"])
        #expect(queue.running == 4 && queue.waiting == 0)
        for _ in 1...4 { #expect(queue.finished().isEmpty) }
        #expect(queue.isIdle)
    }

    @Test("256 wait; beyond, the oldest waiting is dropped, told once when it begins and once with the count")
    func oldestDropped() {
        var queue = Queue(maximumRunning: 4, maximumWaiting: 256)
        var actions: [String] = []
        // 10,000 at one instant: 4 start, 256 wait, 9,740 are dropped.
        for job in 1...10_000 { actions += Self.describe(queue.submit(job)) }
        #expect(actions == ["start 1", "start 2", "start 3", "start 4", "dropping"])
        #expect(queue.waiting == 256)
        // The newest 256 waited: 9,745 is the first of them.
        var after: [String] = []
        for _ in 1...4 { after += Self.describe(queue.finished()) }
        #expect(after == ["start 9745", "start 9746", "start 9747", "start 9748"])
        for _ in 1...251 { after += Self.describe(queue.finished()) }
        #expect(after.last == "start 9999")
        // The last waiting one starts: the queue has drained, the burst's count is told.
        #expect(Self.describe(queue.finished()) == ["start 10000", "dropped 9740"])
        for _ in 1...4 { #expect(queue.finished().isEmpty) }
        #expect(queue.isIdle)
        // A new burst is told anew.
        for job in 1...261 { _ = queue.submit(job) }
        #expect(Self.describe(queue.submit(262)) == [])
        #expect(queue.waiting == 256)
    }

    @Test("a new burst after the queue drained is told again")
    func burstsToldApart() {
        var queue = Queue(maximumRunning: 1, maximumWaiting: 1)
        #expect(Self.describe(queue.submit(1)) == ["start 1"])
        #expect(Self.describe(queue.submit(2)).isEmpty)
        #expect(Self.describe(queue.submit(3)) == ["dropping"])
        #expect(Self.describe(queue.submit(4)).isEmpty)
        #expect(Self.describe(queue.finished()) == ["start 4", "dropped 2"])
        #expect(Self.describe(queue.submit(5)).isEmpty)
        #expect(Self.describe(queue.submit(6)) == ["dropping"])
    }

    @Test("nothing may wait: a job with no free slot is dropped itself")
    func noWaiting() {
        var queue = Queue(maximumRunning: 1, maximumWaiting: 0)
        #expect(Self.describe(queue.submit(1)) == ["start 1"])
        #expect(Self.describe(queue.submit(2)) == ["dropping"])
        #expect(queue.waiting == 0)
        #expect(Self.describe(queue.finished()) == ["dropped 1"])
    }

    @Test("events lost before their hooks were read count with the drops")
    func lostEvents() {
        var queue = Queue(maximumRunning: 1, maximumWaiting: 1)
        // Idle: nothing would tell the count later, so both are told at once.
        #expect(Self.describe(queue.lost(3)) == ["dropping", "dropped 3"])
        _ = queue.submit(1)
        _ = queue.submit(2)
        #expect(Self.describe(queue.lost(5)) == ["dropping"])
        #expect(Self.describe(queue.lost(0)).isEmpty)
        #expect(Self.describe(queue.finished()) == ["start 2", "dropped 5"])
    }
}

/// SIGTERM at the timeout, SIGKILL 2 s later: the actions, at the times given by hand.
@Suite("hook timeout")
struct HookTimeoutTests {
    @Test("timeout, then TERM, then KILL after the grace")
    func termThenKill() {
        var timeout = HookTimeout(timeout: .seconds(30), grace: .seconds(2))
        #expect(timeout.nextCheck == .seconds(30))
        #expect(timeout.check(elapsed: .seconds(29)) == nil)
        #expect(!timeout.hasTimedOut)
        // Checked late: the grace runs from the SIGTERM actually sent.
        #expect(timeout.check(elapsed: .milliseconds(30_500)) == .terminate)
        #expect(timeout.hasTimedOut)
        #expect(timeout.nextCheck == .milliseconds(32_500))
        #expect(timeout.check(elapsed: .seconds(32)) == nil)
        #expect(timeout.check(elapsed: .milliseconds(32_500)) == .kill)
        #expect(timeout.nextCheck == nil)
        #expect(timeout.check(elapsed: .seconds(100)) == nil)
    }

    @Test("a run that ends in time is never signalled")
    func inTime() {
        var timeout = HookTimeout(timeout: .milliseconds(500))
        #expect(timeout.check(elapsed: .milliseconds(499)) == nil)
        #expect(!timeout.hasTimedOut)
    }
}

/// What of a hook's output reaches the log.
@Suite("hook output")
struct HookOutputTests {
    @Test("lines as they complete, the unfinished last one at the end")
    func lines() {
        var output = HookOutput()
        #expect(output.append(Array("one\ntw".utf8)) == ["one"])
        #expect(output.append(Array("o\r\nthree".utf8)) == ["two"])
        #expect(output.finish() == ["three"])
        #expect(output.droppedBytes == 0)
    }

    @Test("bounded: the first lines and bytes, the rest counted")
    func bounded() {
        var output = HookOutput(maximumBytes: 10, maximumLines: 2)
        #expect(output.append(Array("a\nb\nc\nd\n".utf8)) == ["a", "b"])
        #expect(output.droppedBytes == 4)
        // Megabytes: counted, not kept.
        #expect(output.append([UInt8](repeating: 65, count: 4 << 20)).isEmpty)
        #expect(output.droppedBytes == 4 + 4 << 20)
        #expect(output.finish().isEmpty)

        var long = HookOutput(maximumBytes: 8, maximumLines: 32)
        #expect(long.append(Array("0123456789\n".utf8)) == ["01234567"])
        #expect(long.droppedBytes == 3)
    }
}
