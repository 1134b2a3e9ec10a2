import Dispatch
import StopWatchCore
import StopWatchTesting
import Testing

/// The UseCaseKit seed's way of writing a stopwatch compiles and works unchanged.
@Suite("The seed's spelling")
struct SeedSpellingTests {
    @Test("UseCase<StopWatchCommand>(.stopped) { store in …; return { command in … } }")
    func seedSpelling() throws {
        let time = ManualTime()
        let configureRuns = Later<Int>()
        let useCase = UseCase<StopWatchCommand>(.stopped) { store in
            var commandsSeen = 0   // created once, lives as long as the use case
            configureRuns.set(1)
            return { command in
                commandsSeen += 1
                store.update { $0 = (try? $0.applying(command, at: time.now())) ?? $0 }
            }
        }
        let queue = DispatchQueue(label: "seed")
        let counting = DispatchSemaphore(value: 0)
        let subscription = useCase.state.sink(on: queue) { snapshot in
            if snapshot.state.isCounting { counting.signal() }
        }
        useCase.dispatcher.dispatch(.start)
        #expect(counting.wait(timeout: .now() + 10) == .success)
        subscription.cancel()
        #expect(configureRuns.value == 1)
        #expect(useCase.state.current.state == .counting(.zero))
    }

    @Test("the core's example in docs/ARCHITECTURE.md compiles and counts")
    func documentedExample() throws {
        let stopWatch = UseCase<StopWatchCommand>(.stopped) { store in
            // Runs once.
            return { command in
                // Runs for each command, one at a time, on store.queue.
                try store.update { $0 = try $0.applying(command, at: BootClock().now()) }
            }
        }
        stopWatch.dispatcher.dispatch(.start)
        let subscription = stopWatch.state.sink(on: .main) { snapshot in print(snapshot.state) }
        subscription.cancel()
        #expect(try stopWatch.dispatcher.perform(.stop).state.isCounting == false)
        #expect(stopWatch.state.current.state != .stopped)
        #expect(throws: InvalidTransition.self) { try stopWatch.dispatcher.perform(.lap) }
    }
}
