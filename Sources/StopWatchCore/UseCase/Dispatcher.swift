/// Sends commands to a use case. Commands run one at a time, in the order they arrive,
/// whichever thread sends them.
public struct Dispatcher<C: Command>: Sendable {
    let commands: CommandQueue<C>

    /// Sends `command` and returns at once. Safe from anywhere, including from inside a
    /// handler or a sink: the command runs after the ones already sent. A refusal is dropped;
    /// use `perform` to learn of it.
    public func dispatch(_ command: C) {
        commands.enqueue(command, completion: nil)
    }

    /// Sends `command` and calls `completion` (on the use case's queue) with the state after
    /// it, or with the error the handler threw.
    public func dispatch(_ command: C, completion: @escaping @Sendable (Result<C.State, any Error>) -> Void) {
        commands.enqueue(command, completion: completion)
    }

    /// Runs `command` and returns the state after it, or throws what the handler threw.
    /// Waits for the commands sent before it. Throws `UseCaseError.performFromHandlerQueue`
    /// when called from the use case's own queue, where waiting would deadlock.
    @discardableResult
    public func perform(_ command: C) throws -> C.State {
        try commands.runAndWait(command)
    }

    /// Runs `command` without blocking a thread and returns the state after it.
    @discardableResult
    public func perform(_ command: C) async throws -> C.State {
        try await withCheckedThrowingContinuation { continuation in
            commands.enqueue(command) { continuation.resume(with: $0) }
        }
    }
}
