/// What a store calls, on its queue, when it gains its first subscriber or loses its last.
///
/// `@unchecked Sendable` is safe here: `handler` is set once and only ever called on the
/// store's serial queue, like a command handler, so what it captured is never touched by two
/// threads at once.
final class ObservationHandler: @unchecked Sendable {
    private let handler: () -> Void

    init(_ handler: @escaping () -> Void) {
        self.handler = handler
    }

    func call() {
        handler()
    }
}
