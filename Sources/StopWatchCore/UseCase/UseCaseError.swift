/// Misuse of a use case that would otherwise deadlock.
public enum UseCaseError: Error, Equatable, Sendable {
    /// `perform` was called from the use case's own queue (from its handler, a timer on
    /// its queue, a sink on that queue) or from its target queue: it would wait for itself.
    /// Use `dispatch` there.
    case performFromHandlerQueue
}
