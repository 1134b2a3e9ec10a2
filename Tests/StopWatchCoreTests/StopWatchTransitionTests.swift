import StopWatchCore
import StopWatchTesting
import Testing

/// Every cell of the transition table (SPEC §2), on the pure state and through the use case.
@Suite("StopWatch transitions")
struct StopWatchTransitionTests {
    enum Start: String, CaseIterable, CustomTestStringConvertible {
        case stopped, counting, paused
        var testDescription: String { rawValue }
    }

    enum Outcome: Equatable {
        case state(StopWatchState, laps: [Duration])
        case refused
    }

    /// A stopwatch that has counted 3 s (with one lap at 1 s), observed at clock reading 10 s.
    static let now: Duration = .seconds(10)

    static func snapshot(_ start: Start) -> StopWatchSnapshot {
        switch start {
        case .stopped:
            return .stopped
        case .counting:
            return StopWatchSnapshot.counting(since: .seconds(7), laps: [.seconds(1)], now: now)
        case .paused:
            return .paused(at: .seconds(3), laps: [.seconds(1)])
        }
    }

    static let table: [(StopWatchCommand, Start, Outcome)] = [
        (.start, .stopped, .state(.counting(.zero), laps: [])),
        (.start, .counting, .state(.counting(.seconds(3)), laps: [.seconds(1)])),
        (.start, .paused, .state(.counting(.seconds(3)), laps: [.seconds(1)])),
        (.stop, .stopped, .state(.stopped, laps: [])),
        (.stop, .counting, .state(.pause(.seconds(3)), laps: [.seconds(1)])),
        (.stop, .paused, .state(.pause(.seconds(3)), laps: [.seconds(1)])),
        (.toggle, .stopped, .state(.counting(.zero), laps: [])),
        (.toggle, .counting, .state(.pause(.seconds(3)), laps: [.seconds(1)])),
        (.toggle, .paused, .state(.counting(.seconds(3)), laps: [.seconds(1)])),
        (.reset, .stopped, .state(.stopped, laps: [])),
        (.reset, .counting, .refused),
        (.reset, .paused, .state(.stopped, laps: [])),
        (.lap, .stopped, .refused),
        (.lap, .counting, .state(.counting(.seconds(3)), laps: [.seconds(1), .seconds(3)])),
        (.lap, .paused, .refused),
    ]

    /// The commands of the table above (targets have a table of their own below).
    static let plainCommands: [StopWatchCommand] = [.start, .stop, .toggle, .reset, .lap]

    @Test("the table covers every command from every state")
    func tableIsComplete() {
        #expect(Self.table.count == Self.plainCommands.count * Start.allCases.count)
        for command in Self.plainCommands {
            for start in Start.allCases {
                #expect(Self.table.contains { $0.0 == command && $0.1 == start })
            }
        }
    }

    @Test("the pure transition", arguments: table)
    func pureTransition(command: StopWatchCommand, from start: Start, expected: Outcome) throws {
        let before = Self.snapshot(start)
        do {
            let after = try before.applying(command, at: Self.now)
            #expect(Outcome.state(after.state, laps: after.laps) == expected)
            #expect(after.elapsed(at: Self.now) == after.state.elapsed)
            #expect((after.origin != nil) == after.state.isCounting)
        } catch {
            #expect(expected == .refused)
            #expect(error == InvalidTransition(command: command, snapshot: before))
        }
    }

    @Test("the transition through the use case", arguments: table)
    func useCaseTransition(command: StopWatchCommand, from start: Start, expected: Outcome) throws {
        let time = ManualTime(now: Self.now)
        let stopWatch = StopWatchUseCase(Self.snapshot(start), clock: time, timers: time)
        // Watched, so that it ticks while counting.
        let watcher = StateRecorder(stopWatch.state)
        #expect(watcher.wait(forLast: Self.snapshot(start)))
        let before = stopWatch.state.current
        switch expected {
        case .refused:
            #expect(throws: InvalidTransition(command: command, snapshot: before)) {
                try stopWatch.dispatcher.perform(command)
            }
            #expect(stopWatch.state.current == before)
        case .state(let state, let laps):
            let after = try stopWatch.dispatcher.perform(command)
            #expect(after.state == state)
            #expect(after.laps == laps)
            #expect(stopWatch.state.current == after)
        }
        // Watched, a timer exists exactly while counting. (The watcher's arrival was handled
        // on the use case's queue before the command, so this reads the settled timer.)
        #expect(time.liveTimers.count == (stopWatch.state.current.state.isCounting ? 1 : 0))
    }

    @Test("no-op commands publish nothing")
    func noOpsPublishNothing() throws {
        let time = ManualTime()
        let stopWatch = StopWatchUseCase(clock: time, timers: time)
        let recorder = StateRecorder(stopWatch.state)
        try stopWatch.dispatcher.perform(.stop)
        try stopWatch.dispatcher.perform(.reset)
        try stopWatch.dispatcher.perform(.start)
        time.move(by: .milliseconds(300))
        try stopWatch.dispatcher.perform(.start)
        try stopWatch.dispatcher.perform(.stop)
        time.move(by: .milliseconds(300))
        try stopWatch.dispatcher.perform(.stop)
        try stopWatch.dispatcher.perform(.reset)
        try stopWatch.dispatcher.perform(.reset)
        // One more change, distinct from all before it: once it arrives, so has everything earlier.
        time.move(by: .milliseconds(300))
        try stopWatch.dispatcher.perform(.start)
        #expect(recorder.wait { $0.count >= 5 })
        #expect(recorder.states.map(\.state) == [
            .stopped, .counting(.zero), .pause(.milliseconds(300)), .stopped, .counting(.zero),
        ])
    }

    @Test("reset clears the laps; a new count starts with none")
    func resetClearsLaps() throws {
        let time = ManualTime()
        let stopWatch = StopWatchUseCase(clock: time, timers: time)
        try stopWatch.dispatcher.perform(.start)
        time.move(by: .seconds(2))
        try stopWatch.dispatcher.perform(.lap)
        time.move(by: .seconds(1))
        let lapped = try stopWatch.dispatcher.perform(.lap)
        #expect(lapped.laps == [.seconds(2), .seconds(3)])
        try stopWatch.dispatcher.perform(.stop)
        #expect(try stopWatch.dispatcher.perform(.reset) == .stopped)
        #expect(try stopWatch.dispatcher.perform(.start).laps == [])
    }
}
