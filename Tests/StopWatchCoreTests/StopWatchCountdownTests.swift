import Dispatch
import LinuxSystem
import StopWatchCore
import StopWatchTesting
import Testing

/// Countdowns (SPEC §3): the transition table with targets, and the expiry instant derived
/// from the clock, never from ticks.
@Suite("StopWatch countdowns")
struct StopWatchCountdownTests {
    enum Start: String, CaseIterable, CustomTestStringConvertible {
        case stopped, counting, paused, expired
        var testDescription: String { rawValue }
    }

    /// Observed at clock reading 10 s: counting for 3 s with a lap at 1 s, towards a 5 s
    /// target (or past a 2 s one, expired).
    static let now: Duration = .seconds(10)

    static func snapshot(_ start: Start) -> StopWatchSnapshot {
        switch start {
        case .stopped: .stopped(target: .seconds(5))
        case .counting: .counting(since: .seconds(7), laps: [.seconds(1)], now: now, target: .seconds(5))
        case .paused: .paused(at: .seconds(3), laps: [.seconds(1)], target: .seconds(5))
        case .expired: .counting(since: .seconds(7), laps: [.seconds(1)], now: now, target: .seconds(2), hasExpired: true)
        }
    }

    @Test("setTarget changes the target only, in any state, and re-arms an expired one", arguments: Start.allCases)
    func setTarget(from start: Start) throws {
        let before = Self.snapshot(start)
        let after = try before.applying(.setTarget(.seconds(60)), at: Self.now)
        #expect(after.state == before.state)
        #expect(after.laps == before.laps)
        #expect(after.origin == before.origin)
        #expect(after.elapsed(at: Self.now) == before.elapsed(at: Self.now))
        #expect(after.target == .seconds(60))
        #expect(after.hasExpired == false)
        #expect(after.expiry == (after.state.isCounting ? .seconds(67) : nil))
    }

    @Test("setTarget(nil) makes a plain stopwatch; the same target again changes nothing", arguments: Start.allCases)
    func clearAndRepeatTarget(from start: Start) throws {
        let before = Self.snapshot(start)
        let plain = try before.applying(.setTarget(nil), at: Self.now)
        #expect(plain.target == nil)
        #expect(plain.hasExpired == false)
        #expect(plain.expiry == nil)
        #expect(plain.state == before.state)
        #expect(try before.applying(.setTarget(before.target), at: Self.now) == before)
    }

    @Test("countdown starts anew from any state: zero, no laps, the target, counting", arguments: Start.allCases)
    func countdown(from start: Start) throws {
        let after = try Self.snapshot(start).applying(.countdown(.seconds(90)), at: Self.now)
        #expect(after == .counting(since: Self.now, now: Self.now, target: .seconds(90)))
        #expect(after.state == .counting(.zero))
        #expect(after.laps.isEmpty)
        #expect(after.expiry == Self.now + .seconds(90))
    }

    @Test("the target stays through start, stop, lap and reset; reset re-arms it")
    func targetStays() throws {
        var snapshot = try StopWatchSnapshot.stopped.applying(.countdown(.seconds(5)), at: .seconds(0))
        snapshot = try snapshot.applying(.lap, at: .seconds(1))
        #expect(snapshot.target == .seconds(5))
        snapshot = try snapshot.applying(.stop, at: .seconds(2))
        #expect(snapshot.target == .seconds(5))
        #expect(snapshot.expiry == nil, "a paused countdown never expires")
        snapshot = try snapshot.applying(.start, at: .seconds(10))
        #expect(snapshot.expiry == .seconds(13), "resumed at 2 s elapsed, 3 s to go")
        snapshot = try snapshot.applying(.expire, at: .seconds(13))
        #expect(snapshot.hasExpired)
        snapshot = try snapshot.applying(.stop, at: .seconds(14))
        snapshot = try snapshot.applying(.start, at: .seconds(20))
        #expect(snapshot.hasExpired, "resuming in overtime does not expire it again")
        #expect(snapshot.expiry == nil)
        snapshot = try snapshot.applying(.stop, at: .seconds(21))
        snapshot = try snapshot.applying(.reset, at: .seconds(21))
        #expect(snapshot == .stopped(target: .seconds(5)))
        #expect(snapshot.hasExpired == false)
        snapshot = try snapshot.applying(.start, at: .seconds(30))
        #expect(snapshot.expiry == .seconds(35), "reset and start run the same countdown again")
    }

    @Test("expire records the expiry once its instant has come, and only then")
    func expire() throws {
        let counting = try StopWatchSnapshot.stopped.applying(.countdown(.seconds(5)), at: .seconds(100))
        #expect(counting.expiry == .seconds(105))
        #expect(try counting.applying(.expire, at: .milliseconds(104_999)) == counting, "early: nothing")
        let expired = try counting.applying(.expire, at: .milliseconds(105_250))
        #expect(expired.hasExpired)
        #expect(expired.state == .counting(.milliseconds(5250)), "the elapsed time when it was recorded")
        #expect(expired.origin == counting.origin, "it counts on: overtime")
        #expect(expired.expiry == nil)
        #expect(try expired.applying(.expire, at: .seconds(200)) == expired, "once")
    }

    @Test("a paused, stopped or plain stopwatch never expires")
    func neverExpires() throws {
        let paused = StopWatchSnapshot.paused(at: .seconds(10), target: .seconds(5))
        let stopped = StopWatchSnapshot.stopped(target: .seconds(5))
        let plain = StopWatchSnapshot.counting(since: .zero, now: .seconds(10))
        for snapshot in [paused, stopped, plain] {
            #expect(snapshot.expiry == nil)
            #expect(try snapshot.applying(.expire, at: .seconds(1000)) == snapshot)
        }
    }

    @Test("a target set at or below the elapsed time of a counting stopwatch is due at once")
    func targetInThePast() throws {
        let counting = StopWatchSnapshot.counting(since: .seconds(0), now: .seconds(10))
        let late = try counting.applying(.setTarget(.seconds(4)), at: .seconds(10))
        #expect(late.expiry == .seconds(4))
        #expect(try late.applying(.expire, at: .seconds(10)).hasExpired)
        let exact = try counting.applying(.setTarget(.seconds(10)), at: .seconds(10))
        #expect(try exact.applying(.expire, at: .seconds(10)).hasExpired)
    }

    @Test("through a suspend the expiry instant stays on the boot clock: due at resume, not when the monotonic clock would say")
    func expiryAcrossSuspend() throws {
        let time = ManualTime(now: .seconds(1000))
        let stopWatch = StopWatchUseCase(clock: time, timers: time, tick: .seconds(1))
        let countdown = try stopWatch.dispatcher.perform(.countdown(.seconds(25 * 60)))
        #expect(countdown.expiry == .seconds(1000 + 25 * 60))
        time.advance(by: .seconds(5 * 60))
        // The lid closes for an hour. The boot clock jumps; the monotonic clock does not.
        time.suspend(for: .seconds(3600))
        let resumed = stopWatch.state.current
        #expect(resumed.elapsed(at: time.now()) == .seconds(65 * 60), "suspend counts")
        #expect(try #require(resumed.expiry) <= time.now(), "the countdown is over: due at resume")
        let expired = try stopWatch.dispatcher.perform(.expire)
        #expect(expired.hasExpired)
        #expect(expired.state == .counting(.seconds(65 * 60)))
        // How late it is told: the instant it fell, 40 min before resume.
        #expect(time.now() - countdown.expiry! == .seconds(40 * 60))
    }

    @Test("a suspend postpones monotonic timers and fires the boot timers that fell in it")
    func manualSuspend() {
        let time = ManualTime(now: .seconds(100))
        let queue = DispatchQueue(label: "timers")
        let fired = Locked<[String]>([])
        let monotonic = time.makeTimer(on: queue) { _, _ in fired.withLock { $0.append("monotonic") } }
        let boot = time.bootTimers.makeTimer(on: queue) { _, _ in fired.withLock { $0.append("boot") } }
        monotonic.schedule(at: .seconds(160), now: time.now())
        boot.schedule(at: .seconds(160), now: time.now())
        time.suspend(for: .seconds(600))
        #expect(fired.withLock { $0 } == ["boot"])
        #expect((monotonic as? ManualTimer)?.deadline == .seconds(760))
        time.advance(by: .seconds(60))
        #expect(fired.withLock { $0 } == ["boot", "monotonic"])
    }
}
