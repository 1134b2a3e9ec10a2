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
        let recorder = StateRecorder(useCase.state, on: queue)
        let states = Later<Int>()
        let subscription = useCase.state.sink(on: queue) { _ in states.set(1) }
        useCase.dispatcher.dispatch(.start)
        #expect(recorder.wait { $0.last?.state == .counting(.zero) })
        subscription.cancel()
        #expect(configureRuns.value == 1)
        #expect(states.value == 1)
    }
}
