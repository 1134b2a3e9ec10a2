import Dispatch

/// Runs a use case's command handler, one command at a time, on the store's serial queue.
///
/// `@unchecked Sendable` is safe here: `handle` and whatever it captured are set once in
/// `init` (before any command is enqueued) and only ever called on `store.queue`, a serial
/// queue, so they are never touched by two threads at once.
final class CommandQueue<C: Command>: @unchecked Sendable {
    let store: Store<C.State>
    private let handle: (C) throws -> Void
    /// Owned here, like `handle`: the store only points to it weakly.
    private let observation: ObservationHandler?

    init(store: Store<C.State>, handle: @escaping (C) throws -> Void) {
        self.store = store
        self.handle = handle
        self.observation = store.claimObservationHandler()
    }

    func enqueue(_ command: C, completion: (@Sendable (Result<C.State, any Error>) -> Void)?) {
        store.queue.async {
            let result = self.run(command)
            completion?(result)
        }
    }

    func runAndWait(_ command: C) throws -> C.State {
        if store.isOnQueue {
            throw UseCaseError.performFromHandlerQueue
        }
        return try store.queue.sync { try run(command).get() }
    }

    private func run(_ command: C) -> Result<C.State, any Error> {
        Result {
            try handle(command)
            return store.currentState
        }
    }
}
