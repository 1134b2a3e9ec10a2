import StopWatchCore

/// A small command set for testing the generic core: the state is the list of entries
/// appended so far, so any loss, duplicate or reordering shows.
enum LogCommand: Command {
    typealias State = [Int]

    case append(Int)
    case set([Int])
    /// Appends `n`, then dispatches `chain(n - 1)` from inside the handler, down to 0.
    case chain(Int)
    case refuse

    struct Refused: Error, Equatable {}
}

/// A log use case, with its store and its own dispatcher reachable from inside the handler.
final class LogUseCase: Sendable {
    let useCase: UseCase<LogCommand>
    let store: Store<[Int]>

    init(_ initial: [Int] = []) {
        let dispatcher = Later<Dispatcher<LogCommand>>()
        let storeHolder = Later<Store<[Int]>>()
        useCase = UseCase<LogCommand>(initial) { store in
            storeHolder.set(store)
            return { command in
                switch command {
                case .append(let n):
                    store.update { $0.append(n) }
                case .set(let entries):
                    store.update { $0 = entries }
                case .chain(let n):
                    store.update { $0.append(n) }
                    if n > 0 { dispatcher.value.dispatch(.chain(n - 1)) }
                case .refuse:
                    throw LogCommand.Refused()
                }
            }
        }
        store = storeHolder.value
        dispatcher.set(useCase.dispatcher)
    }

    var dispatcher: Dispatcher<LogCommand> { useCase.dispatcher }
    var state: StatePublisher<[Int]> { useCase.state }
}

/// A value set once, after the closures that read it were made.
final class Later<Value: Sendable>: Sendable {
    private let storage = Locked<Value?>(nil)

    func set(_ value: Value) { storage.withLock { $0 = value } }

    var value: Value {
        guard let value = storage.withLock({ $0 }) else { fatalError("read before set") }
        return value
    }
}
