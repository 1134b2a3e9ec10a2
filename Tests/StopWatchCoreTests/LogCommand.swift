import LinuxSystem
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
        // Weak: the handler must not keep its own use case alive.
        let owner = WeakReference<LogUseCase>()
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
                    if n > 0 { owner.value?.dispatcher.dispatch(.chain(n - 1)) }
                case .refuse:
                    throw LogCommand.Refused()
                }
            }
        }
        store = storeHolder.value
        owner.set(self)
    }

    var dispatcher: Dispatcher<LogCommand> { useCase.dispatcher }
    var state: StatePublisher<[Int]> { useCase.state }
}

/// A weak reference to an object set after the closures that read it were made.
final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    private let storage = Locked<Box>(Box())

    private struct Box: @unchecked Sendable {
        // @unchecked Sendable: only read and written under `storage`'s lock; Object is Sendable.
        weak var object: Object?
    }

    func set(_ object: Object) { storage.withLock { $0.object = object } }

    var value: Object? { storage.withLock { $0.object } }
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
