import StopwatchdClient

extension ClientError {
    /// Whether no daemon answered, here (`unreachable`) or through ssh (`bridgeFailed`), or
    /// the one that did went away (`connectionClosed`): what `watch` and `wait` retry after
    /// their first connection, as a daemon's restart.
    var isUnreachable: Bool {
        switch self {
        case .unreachable, .connectionClosed, .bridgeFailed: true
        default: false
        }
    }
}
