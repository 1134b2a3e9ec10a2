/// A correction of the history (SPEC §3 "Corrections"): what `StopwatchClient.undo()` says
/// it took back.
public enum Correction: String, Equatable, Sendable {
    /// An interval added (`track`); undone, it is gone.
    case track
    /// An interval changed (`amend`); undone, it is as before.
    case amend
    /// An interval removed (`delete`); undone, it is back.
    case delete
}
