@testable import StopwatchDaemon
import StopwatchProtocol
import Testing

/// The budget all History streams share (`HistoryMemory`): who is granted what, who waits,
/// and in what order they are served. Synchronous: nothing to wait for.
@Suite("history memory budget")
struct HistoryMemoryTests {
    static let minimum = HistoryMemory.minimumGrant

    /// An account that records its grants made after a wait.
    final class Recorded {
        let account: HistoryMemory.Account
        var grants: [Int] = []

        init(_ memory: HistoryMemory, log: Log? = nil, name: String = "") {
            account = memory.openAccount()
            account.whenGranted = { [unowned self] bytes in
                grants.append(bytes)
                log?.order.append(name)
            }
        }
    }

    final class Log {
        var order: [String] = []
    }

    @Test("grants at once from what is left, at most each stream's share of the limit")
    func sharesOfTheLimit() {
        let memory = HistoryMemory(limit: 8 * Self.minimum)
        let a = Recorded(memory), b = Recorded(memory)
        // Two open: a share is half the limit.
        #expect(a.account.request() == 4 * Self.minimum)
        #expect(b.account.request() == 4 * Self.minimum)
        #expect(memory.used == 8 * Self.minimum)
        b.account.giveBack(3 * Self.minimum)
        #expect(memory.used == 5 * Self.minimum)
        // A third, while 3 minimums are left: its share is less (a third of the limit).
        let c = Recorded(memory)
        #expect(c.account.request() == 8 * Self.minimum / 3)
    }

    @Test("while the budget is spent, streams that hold something wait, and are served in the order they asked as memory comes back")
    func waitersInOrder() {
        let memory = HistoryMemory(limit: 4 * Self.minimum)
        let log = Log()
        let holder = Recorded(memory, log: log, name: "holder")
        #expect(holder.account.request() == 4 * Self.minimum)
        // Each of these holds a reply already (`take`, as a reply that outgrew its grant).
        let first = Recorded(memory, log: log, name: "first"), second = Recorded(memory, log: log, name: "second")
        first.account.take(100)
        second.account.take(100)
        #expect(first.account.request() == nil)
        #expect(second.account.request() == nil)
        #expect(memory.waitingCount == 2)
        // Room for one minimum: the first who asked gets it; the second still waits.
        holder.account.giveBack(Self.minimum + 200)
        #expect(log.order == ["first"])
        #expect(first.grants.count == 1 && first.grants[0] >= Self.minimum)
        #expect(second.grants.isEmpty)
        holder.account.giveBack(3 * Self.minimum)
        #expect(log.order == ["first", "second"])
        #expect(memory.waitingCount == 0)
        #expect(memory.used <= memory.limit)
    }

    @Test("a stream that holds nothing gets a minimum grant even while the budget is spent, and so does one that holds all that is used")
    func neverStuck() {
        let memory = HistoryMemory(limit: 4 * Self.minimum)
        let stalled = Recorded(memory)
        #expect(stalled.account.request() == 4 * Self.minimum)
        // A reader that reads while a stalled one keeps the whole budget: small replies.
        let reader = Recorded(memory)
        #expect(reader.account.request() == Self.minimum)
        #expect(memory.used == 5 * Self.minimum)
        // Holding one, it waits for the next until that one is written...
        #expect(reader.account.request() == nil)
        // ...and once its reply is written it holds nothing: granted at once.
        reader.account.giveBack(Self.minimum)
        #expect(reader.grants == [Self.minimum])
        // The only holder of all that is used: a reply larger than the whole budget completes.
        reader.account.close()
        #expect(stalled.account.request() == Self.minimum)
        #expect(memory.used == 5 * Self.minimum)
    }

    @Test("replies that cannot be cut grow one at a time: the next begins when the first is complete")
    func wholeRepliesOneAtATime() {
        let memory = HistoryMemory(limit: 4 * Self.minimum)
        let a = Recorded(memory), b = Recorded(memory)
        let first = a.account.request(whole: true)
        #expect(first != nil)
        // The second waits before its first grant: it holds nothing meanwhile.
        #expect(b.account.request(whole: true) == nil)
        #expect(b.account.held == 0)
        // The first grows to the limit, then past it, alone.
        #expect(a.account.request(whole: true) != nil)
        #expect(a.account.request(whole: true) == Self.minimum)
        #expect(b.grants.isEmpty)
        // Complete: the second begins, and being empty it is granted at once.
        a.account.endWholeReply()
        #expect(b.grants == [Self.minimum])
        // As a stream does when it ends: the budget holds the reply's owner until then.
        a.account.close()
        b.account.close()
    }

    @Test("closing gives everything back, leaves the queues, and serves those waiting")
    func closing() {
        let memory = HistoryMemory(limit: 2 * Self.minimum)
        let holder = Recorded(memory), waiter = Recorded(memory), leaver = Recorded(memory)
        #expect(holder.account.request() != nil)
        waiter.account.take(10)
        leaver.account.take(10)
        #expect(leaver.account.request() == nil)
        #expect(waiter.account.request() == nil)
        leaver.account.close()
        #expect(memory.waitingCount == 1)
        holder.account.close()
        #expect(waiter.grants.count == 1)
        #expect(leaver.grants.isEmpty)
        waiter.account.close()
        #expect(memory.used == 0)
        #expect(memory.accountCount == 0)
        // Closed: asks for nothing, holds nothing.
        #expect(waiter.account.request() == nil)
        waiter.account.take(100)
        #expect(memory.used == 0)
    }

    @Test("a reply takes an interval only while it surely fits its grant, the first always; never more than the batch")
    func replyWithinItsGrant() {
        let interval = Interval(name: "a name", startMs: 1_767_261_600_000, endMs: 1_767_261_601_000, elapsedMs: 1_000)
        var reply = HistoryReply(granted: 2048)
        var added = 0
        while reply.add(interval, batchSize: 100) { added += 1 }
        #expect(added > 1)
        let capacity = reply.bytes.capacity
        let message = reply.message(continues: true)
        #expect(message.count <= 2048)
        // Closed within what it had: no growth at the end.
        #expect(message.capacity == capacity)
        #expect(message.last == 0)
        var tiny = HistoryReply(granted: 1)
        let tinyTakes = [tiny.add(interval, batchSize: 100), tiny.add(interval, batchSize: 100)]
        #expect(tinyTakes == [true, false])
        var counted = HistoryReply(granted: 1 << 20)
        let countedTakes = (0..<4).map { _ in counted.add(interval, batchSize: 3) }
        #expect(countedTakes == [true, true, true, false])
    }
}
