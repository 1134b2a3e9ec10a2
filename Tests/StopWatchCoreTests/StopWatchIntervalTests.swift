import StopWatchCore
import Testing

/// Counting intervals (SPEC §3 `Interval`): where the current one began, what it counted,
/// and which transitions end it; what the daemon's history is built on.
@Suite("StopWatch counting intervals")
struct StopWatchIntervalTests {
    @Test("a start from stopped begins an interval at zero; a resume at the paused time")
    func intervalStart() throws {
        let started = try StopWatchSnapshot.stopped.applying(.start, at: .seconds(100))
        #expect(started.elapsedAtIntervalStart == .zero)
        let paused = try started.applying(.stop, at: .seconds(130))
        #expect(paused.elapsedAtIntervalStart == nil)
        #expect(paused.intervalElapsed(at: .seconds(200)) == nil)
        let resumed = try paused.applying(.toggle, at: .seconds(200))
        #expect(resumed.elapsedAtIntervalStart == .seconds(30))
        #expect(resumed.intervalElapsed(at: .seconds(212)) == .seconds(12))
        #expect(resumed.elapsed(at: .seconds(212)) == .seconds(42))
    }

    @Test("laps, targets and an expiry keep the interval; a countdown begins a new one")
    func keptOrNew() throws {
        let resumed = try StopWatchSnapshot.paused(at: .seconds(30)).applying(.start, at: .seconds(200))
        let lapped = try resumed.applying(.lap, at: .seconds(205))
        let targeted = try lapped.applying(.setTarget(.seconds(40)), at: .seconds(206))
        let expired = try targeted.applying(.expire, at: .seconds(211))
        for kept in [lapped, targeted, expired] {
            #expect(kept.elapsedAtIntervalStart == .seconds(30))
            #expect(!resumed.endsInterval(goingTo: kept))
        }
        let countdown = try expired.applying(.countdown(.seconds(60)), at: .seconds(220))
        #expect(countdown.elapsedAtIntervalStart == .zero)
        #expect(expired.endsInterval(goingTo: countdown))
    }

    @Test("a stop ends an interval; nothing ends one that is not counting")
    func ends() throws {
        let counting = StopWatchSnapshot.counting(since: .seconds(10), now: .seconds(20))
        #expect(counting.endsInterval(goingTo: try counting.applying(.stop, at: .seconds(25))))
        #expect(counting.endsInterval(goingTo: try counting.applying(.toggle, at: .seconds(25))))
        let paused = StopWatchSnapshot.paused(at: .seconds(5))
        #expect(!paused.endsInterval(goingTo: try paused.applying(.start, at: .seconds(25))))
        #expect(!paused.endsInterval(goingTo: try paused.applying(.countdown(.seconds(9)), at: .seconds(25))))
        #expect(!StopWatchSnapshot.stopped.endsInterval(goingTo: .stopped))
    }

    @Test("an interval start is kept within 0 … elapsed")
    func clamped() {
        let snapshot = StopWatchSnapshot.counting(since: .seconds(10), now: .seconds(20), intervalStart: .seconds(50))
        #expect(snapshot.elapsedAtIntervalStart == .seconds(10))
        #expect(snapshot.intervalElapsed(at: .seconds(20)) == .zero)
    }
}
