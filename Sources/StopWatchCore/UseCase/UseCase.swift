import Dispatch

/// A piece of application logic: a state, the commands that change it, and whoever
/// follows the state.
///
///     let stopWatch = UseCase<StopWatchCommand>(.stopped) { store in
///         // Runs once: what is created here (a timer, a connection) lives as long as the use case.
///         return { command in
///             // Runs for every command, one at a time, on `store.queue`.
///             store.update { $0 = … }
///         }
///     }
///     stopWatch.dispatcher.dispatch(.start)
///     let subscription = stopWatch.state.sink(on: queue) { state in … }
///     subscription.cancel()
public final class UseCase<C: Command>: Sendable {
    /// The states, to sink or iterate.
    public let state: StatePublisher<C.State>
    /// Where commands are sent.
    public let dispatcher: Dispatcher<C>

    /// - Parameters:
    ///   - initialState: the state before any command.
    ///   - targetQueue: where the use case's serial queue runs its work (a global queue if nil).
    ///   - configure: called once, now, with the store; returns the command handler. The
    ///     handler may throw to refuse a command: `perform` rethrows it, `dispatch` drops it.
    public init(
        _ initialState: C.State,
        targetQueue: DispatchQueue? = nil,
        configure: (Store<C.State>) -> (C) throws -> Void
    ) {
        let queue = DispatchQueue(label: "stopwatchd.usecase", target: targetQueue)
        let store = Store(initialState, queue: queue, targetQueue: targetQueue)
        let commands = CommandQueue<C>(store: store, handle: configure(store))
        self.state = StatePublisher(store: store)
        self.dispatcher = Dispatcher(commands: commands)
    }
}
