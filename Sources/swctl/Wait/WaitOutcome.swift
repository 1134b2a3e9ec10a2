/// How `swctl wait` ends, when the daemon did not fail it.
package enum WaitOutcome: Equatable, Sendable {
    /// What it waited for happened (or had already).
    case happened
    /// The stopwatch was removed: it will not happen.
    case removed
    /// `--timeout` passed first.
    case timedOut

    /// SPEC §5: 0 when it happens, 1 when removed, 124 on timeout (as timeout(1) has it).
    package var exitStatus: Int32 {
        switch self {
        case .happened: 0
        case .removed: 1
        case .timedOut: 124
        }
    }
}
