import Testing
@testable import StopwatchDaemon

/// The pool of hook runs, driven alone: no process, no clock.
@Suite("hook pool")
struct HookQueueTests {
    typealias Queue = HookQueue<Int>

    @Test("at most 4 run; the others wait and start in order as slots free")
    func fourRunning() {
        var queue = Queue(maximumRunning: 4)
        var started: [Int] = []
        for job in 1...6 {
            if let start = queue.submit(job) { started.append(start) }
        }
        #expect(started == [1, 2, 3, 4])
        #expect(queue.running == 4 && queue.waiting == 2)
        #expect(queue.finished() == 5)
        #expect(queue.finished() == 6)
        #expect(queue.running == 4 && queue.waiting == 0)
        for _ in 1...4 { #expect(queue.finished() == nil) }
        #expect(queue.isIdle)
    }

    @Test("many waiting: taken in order, the spent slots reclaimed")
    func manyWaiting() {
        var queue = Queue(maximumRunning: 2)
        for job in 1...1000 { _ = queue.submit(job) }
        var order: [Int] = []
        while let next = queue.finished() { order.append(next) }
        #expect(order == Array(3...1000))
        #expect(queue.running == 1)
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
