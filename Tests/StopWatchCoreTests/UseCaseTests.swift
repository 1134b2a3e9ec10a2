import LinuxSystem
import Dispatch
import Foundation
import StopWatchCore
import StopWatchTesting
import Synchronization
import Testing

@Suite("UseCase: the generic core")
struct UseCaseTests {
    @Test("a new subscriber first receives the current state")
    func newSubscriberGetsCurrentState() throws {
        let log = LogUseCase([7])
        let recorder = StateRecorder(log.state)
        #expect(recorder.wait(forLast: [7]))
        #expect(recorder.states == [[7]])
    }

    @Test("subscribing does not re-notify the existing subscribers")
    func subscribingDoesNotRenotify() throws {
        let log = LogUseCase()
        let first = StateRecorder(log.state)
        try log.dispatcher.perform(.append(1))
        #expect(first.wait(forLast: [1]))

        let second = StateRecorder(log.state)
        #expect(second.wait(forLast: [1]))
        try log.dispatcher.perform(.append(2))   // a later change, to see what came before it
        #expect(first.wait(forLast: [1, 2]))
        #expect(second.wait(forLast: [1, 2]))

        #expect(first.states == [[], [1], [1, 2]])
        #expect(second.states == [[1], [1, 2]])
    }

    @Test("a state equal to the current one is not delivered")
    func equalStatesAreDeduplicated() throws {
        let log = LogUseCase()
        let recorder = StateRecorder(log.state)
        for _ in 0..<3 { try log.dispatcher.perform(.set([1])) }
        try log.dispatcher.perform(.set([2]))
        #expect(recorder.wait(forLast: [2]))
        #expect(recorder.states == [[], [1], [2]])
    }

    @Test("dispatches from many threads: every subscriber sees the same sequence")
    func concurrentDispatchesSameOrderForAll() throws {
        let log = LogUseCase()
        let serial = StateRecorder(log.state)
        let concurrent = StateRecorder(log.state, on: DispatchQueue(label: "c", attributes: .concurrent))
        let global = StateRecorder(log.state, on: .global())
        let threads = 8, perThread = 250

        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for i in 0..<perThread {
                // Half through `dispatch`, half straight into the store.
                if i.isMultiple(of: 2) {
                    log.dispatcher.dispatch(.append(thread * 1000 + i))
                } else {
                    log.store.update { $0.append(thread * 1000 + i) }
                }
            }
        }
        let total = threads * perThread
        for recorder in [serial, concurrent, global] {
            #expect(recorder.wait { $0.last?.count == total })
        }

        let sequence = serial.states
        #expect(sequence.count == total + 1)
        #expect(concurrent.states == sequence)
        #expect(global.states == sequence)
        // Each state extends the one before it by one entry: nothing lost, nothing reordered.
        #expect(zip(sequence, sequence.dropFirst()).allSatisfy { Array($1.dropLast()) == $0 })
        // And each thread's entries are in the order that thread sent them, per channel
        // (its dispatched commands are queued, its direct updates are not).
        let final = try #require(sequence.last)
        for thread in 0..<threads {
            for channel in 0..<2 {
                let own = final.filter { $0 / 1000 == thread && $0 % 2 == channel }
                #expect(own.count == perThread / 2 && own == own.sorted(), "thread \(thread), channel \(channel)")
            }
        }
    }

    @Test("store updates from many threads are not lost")
    func concurrentUpdatesAreAtomic() throws {
        let log = LogUseCase([0])
        DispatchQueue.concurrentPerform(iterations: 4000) { _ in
            log.store.update { $0[0] += 1 }
        }
        #expect(log.store.currentState == [4000])
    }

    @Test("dispatching from inside a sink neither deadlocks nor reorders")
    func dispatchFromInsideSink() throws {
        let log = LogUseCase()
        let subscription = log.state.sink(on: DispatchQueue(label: "sink")) { state in
            if state.count < 20 { log.dispatcher.dispatch(.append(state.count)) }
        }
        defer { subscription.cancel() }
        let recorder = StateRecorder(log.state)
        let expected = Array(0..<20)
        #expect(recorder.wait(forLast: expected))
        #expect(recorder.states.last == expected)
        for (before, after) in zip(recorder.states, recorder.states.dropFirst()) {
            #expect(Array(after.dropLast()) == before)
        }
    }

    @Test("updating the store and performing from inside a sink neither deadlocks nor reorders")
    func updateAndPerformFromInsideSink() throws {
        let log = LogUseCase()
        let subscription = log.state.sink(on: .global()) { state in
            guard state.count < 20 else { return }
            if state.count.isMultiple(of: 2) {
                log.store.update { if $0.count == state.count { $0.append(state.count) } }
            } else {
                _ = try? log.dispatcher.perform(.set(state + [state.count]))
            }
        }
        defer { subscription.cancel() }
        let recorder = StateRecorder(log.state)
        #expect(recorder.wait(forLast: Array(0..<20)))
        for (before, after) in zip(recorder.states, recorder.states.dropFirst()) {
            #expect(Array(after.dropLast()) == before)
        }
    }

    @Test("dispatching from inside a handler runs after the current command, in order")
    func dispatchFromInsideHandler() throws {
        let log = LogUseCase()
        let recorder = StateRecorder(log.state)
        try log.dispatcher.perform(.chain(5))
        let expected = [5, 4, 3, 2, 1, 0]
        #expect(recorder.wait(forLast: expected))
        #expect(recorder.states == [[], [5], [5, 4], [5, 4, 3], [5, 4, 3, 2], [5, 4, 3, 2, 1], expected])
    }

    @Test("perform from the use case's own queue throws instead of deadlocking")
    func performFromOwnQueueThrows() throws {
        let log = LogUseCase()
        let caught = Locked<(any Error)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let subscription = log.state.sink(on: log.store.queue) { _ in
            do { try log.dispatcher.perform(.append(1)) } catch { caught.withLock { $0 = error } }
            done.signal()
        }
        defer { subscription.cancel() }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(caught.withLock { $0 as? UseCaseError } == .performFromHandlerQueue)
    }

    @Test("perform returns the state after the command and rethrows a refusal")
    func performReturnsStateAndRethrows() throws {
        let log = LogUseCase()
        #expect(try log.dispatcher.perform(.append(1)) == [1])
        #expect(throws: LogCommand.Refused()) { try log.dispatcher.perform(.refuse) }
        #expect(log.state.current == [1])
    }

    @Test("perform from async code returns the state after the command and rethrows a refusal")
    func asyncPerformReturnsStateAndRethrows() async throws {
        let log = LogUseCase()
        #expect(try await log.dispatcher.perform(.append(2)) == [2])
        await #expect(throws: LogCommand.Refused()) { try await log.dispatcher.perform(.refuse) }
        #expect(log.state.current == [2])
    }

    @Test("dispatch with a completion reports the result")
    func dispatchCompletion() throws {
        let log = LogUseCase()
        let results = Locked<[Result<[Int], LogCommand.Refused>]>([])
        let done = DispatchSemaphore(value: 0)
        for command in [LogCommand.append(1), .refuse] {
            log.dispatcher.dispatch(command) { result in
                results.withLock { $0.append(result.mapError { $0 as! LogCommand.Refused }) }
                done.signal()
            }
        }
        for _ in 0..<2 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(results.withLock { $0 } == [.success([1]), .failure(LogCommand.Refused())])
    }

    @Test("nothing is delivered after cancel() returns, even cancelled from another thread mid-stream")
    func cancelFromAnotherThreadWhileFlowing() throws {
        for round in 0..<20 {
            let log = LogUseCase()
            let cancelReturned = Atomic(false)
            let lateDeliveries = Atomic(0)
            let deliveries = Atomic(0)
            let inSink = Atomic(0)
            let threshold = 5 + round
            let reachedThreshold = DispatchSemaphore(value: 0)
            let subscription = log.state.sink(on: .global()) { _ in
                inSink.add(1, ordering: .sequentiallyConsistent)
                if cancelReturned.load(ordering: .sequentiallyConsistent) {
                    lateDeliveries.add(1, ordering: .sequentiallyConsistent)
                }
                if deliveries.add(1, ordering: .relaxed).newValue == threshold { reachedThreshold.signal() }
                // Linger, so that cancel() often lands while a delivery is running.
                for _ in 0..<1000 where !cancelReturned.load(ordering: .relaxed) {}
                if cancelReturned.load(ordering: .sequentiallyConsistent) {
                    lateDeliveries.add(1, ordering: .sequentiallyConsistent)
                }
                inSink.subtract(1, ordering: .sequentiallyConsistent)
            }
            // Producer and canceller on threads of their own: on a busy 2-core machine the
            // shared dispatch pool may have no thread to spare.
            let produced = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                for i in 0..<2000 { log.store.update { $0 = [i] } }
                produced.signal()
            }
            let cancelled = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = reachedThreshold.wait(timeout: .now() + 30)
                subscription.cancel()
                // The delivery that was running has finished: nothing is inside the sink.
                if inSink.load(ordering: .sequentiallyConsistent) != 0 {
                    lateDeliveries.add(1, ordering: .sequentiallyConsistent)
                }
                cancelReturned.store(true, ordering: .sequentiallyConsistent)
                cancelled.signal()
            }
            #expect(cancelled.wait(timeout: .now() + 60) == .success)
            #expect(produced.wait(timeout: .now() + 60) == .success)
            // A later subscriber sees the end of the stream, so every earlier delivery was queued.
            let after = StateRecorder(log.state)
            #expect(after.wait(forLast: [1999]))
            #expect(lateDeliveries.load(ordering: .sequentiallyConsistent) == 0)
            #expect(log.store.subscriberCount == 1)
        }
    }

    @Test("cancelling from inside its own sink returns at once and stops the deliveries")
    func cancelFromInsideOwnSink() throws {
        let log = LogUseCase()
        let received = Locked<[[Int]]>([])
        let cancelReturned = DispatchSemaphore(value: 0)
        let subscription = Later<Subscription>()
        let subscribed = DispatchSemaphore(value: 0)
        subscription.set(log.state.sink(on: DispatchQueue(label: "own")) { state in
            received.withLock { $0.append(state) }
            if state == [1] {
                subscribed.wait()
                subscription.value.cancel()
                cancelReturned.signal()
            }
        })
        subscribed.signal()
        try log.dispatcher.perform(.set([1]))
        #expect(cancelReturned.wait(timeout: .now() + 10) == .success)
        for i in 2...5 { try log.dispatcher.perform(.set([i])) }
        // A later subscriber on the same serial queue runs after anything still queued there.
        let witness = StateRecorder(log.state, on: DispatchQueue(label: "own"))
        #expect(witness.wait(forLast: [5]))
        #expect(received.withLock { $0 } == [[], [1]])
        #expect(log.store.subscriberCount == 1)
    }

    @Test("cancel() on the use case's queue while the sink waits in perform does not deadlock")
    func cancelOnUseCaseQueueWhileSinkPerforms() throws {
        let log = LogUseCase()
        let inSink = DispatchSemaphore(value: 0)
        let performed = DispatchSemaphore(value: 0)
        let subscription = log.state.sink(on: .global()) { state in
            guard state == [1] else { return }
            inSink.signal()
            _ = try? log.dispatcher.perform(.append(2))   // waits for the use case's queue
            performed.signal()
        }
        log.dispatcher.dispatch(.set([1]))
        #expect(inSink.wait(timeout: .now() + 10) == .success)
        // Cancel from the use case's own queue while the sink is blocked on it.
        let cancelled = DispatchSemaphore(value: 0)
        log.store.queue.async {
            subscription.cancel()
            cancelled.signal()
        }
        #expect(cancelled.wait(timeout: .now() + 10) == .success)
        #expect(performed.wait(timeout: .now() + 10) == .success)
    }

    @Test("perform from the use case's serial target queue throws instead of crashing")
    func performFromTargetQueueThrows() throws {
        let target = DispatchQueue(label: "target")
        let useCase = UseCase<LogCommand>([], targetQueue: target) { store in
            { command in if case .append(let n) = command { store.update { $0.append(n) } } }
        }
        let caught = target.sync { () -> (any Error)? in
            do { try useCase.dispatcher.perform(.append(1)); return nil } catch { return error }
        }
        #expect(caught as? UseCaseError == .performFromHandlerQueue)
        #expect(try useCase.dispatcher.perform(.append(2)) == [2])
    }

    @Test("cancelling releases the sink and what it captured")
    func cancelReleasesSink() throws {
        final class Captured: Sendable {}
        let log = LogUseCase()
        weak var weakCaptured: Captured?
        let subscription: Subscription = {
            let captured = Captured()
            weakCaptured = captured
            return log.state.sink(on: .global()) { _ in _ = captured }
        }()
        #expect(weakCaptured != nil)
        subscription.cancel()
        #expect(weakCaptured == nil)
    }

    @Test("a subscriber joining mid-stream gets a suffix of what the others get, from the state it joined at")
    func subscriberJoiningMidStream() throws {
        let log = LogUseCase()
        let early = StateRecorder(log.state)
        let joined = Later<StateRecorder<[Int]>>()
        let producer = DispatchQueue(label: "producer")
        producer.async {
            for i in 0..<500 {
                if i == 200 { joined.set(StateRecorder(log.state)) }
                log.store.update { $0 = [i] }
            }
        }
        #expect(early.wait(forLast: [499]))
        producer.sync {}
        let late = joined.value
        #expect(late.wait(forLast: [499]))
        let first = try #require(late.states.first)
        let start = try #require(early.states.firstIndex(of: first))
        #expect(Array(early.states[start...]) == late.states)
    }

    @Test("a use case that watches its observers is freed with its store (no cycle through the handler)")
    func observationHandlerDoesNotLeak() throws {
        weak var weakStore: Store<[Int]>?
        let observed = Locked(0)
        do {
            let useCase = UseCase<LogCommand>([]) { store in
                weakStore = store
                // Capturing the store, as the stopwatch's handler does: that is what could cycle.
                store.whenObservationChanges { if store.isObserved { observed.withLock { $0 += 1 } } }
                return { _ in _ = store.currentState }
            }
            let subscription = useCase.state.sink(on: .global()) { _ in }
            try useCase.dispatcher.perform(.append(1))   // the observation call has run by now
            subscription.cancel()
            #expect(observed.withLock { $0 } >= 1)
        }
        // Blocks still queued may hold it a moment: wait for the last reference to go.
        let deadline = ContinuousClock.now + .seconds(10)
        while weakStore != nil, ContinuousClock.now < deadline {}
        #expect(weakStore == nil)
    }

    @Test("the state is an AsyncSequence: current state first, then each change; ending it unsubscribes")
    func asyncSequence() async throws {
        let log = LogUseCase()
        var seen: [[Int]] = []
        for await state in log.state {
            seen.append(state)
            if state.count < 3 { log.dispatcher.dispatch(.append(state.count)) }
            if state.count == 3 { break }
        }
        #expect(seen == [[], [0], [0, 1], [0, 1, 2]])
        let deadline = ContinuousClock.now + .seconds(10)
        while log.store.subscriberCount > 0, ContinuousClock.now < deadline { await Task.yield() }
        #expect(log.store.subscriberCount == 0)
    }
}
