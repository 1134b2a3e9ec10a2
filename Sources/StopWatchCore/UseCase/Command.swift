/// A request to change a use case's state.
///
/// A command names the type of state it changes, so that `UseCase<SomeCommand>` knows
/// what it holds and publishes:
///
///     enum CounterCommand: Command {
///         typealias State = Int
///         case increment, reset
///     }
public protocol Command: Sendable {
    associatedtype State: Equatable & Sendable
}
