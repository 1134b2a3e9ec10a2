/// What a stopwatch can be told to do. See `StopWatchSnapshot.applying(_:at:)` for the
/// transition table.
public enum StopWatchCommand: Command, CaseIterable {
    public typealias State = StopWatchSnapshot

    /// Starts counting from zero, or resumes a paused stopwatch.
    case start
    /// Pauses a counting stopwatch.
    case stop
    /// `start` when not counting, `stop` when counting.
    case toggle
    /// Back to zero, laps cleared; refused while counting.
    case reset
    /// Records a split time; only while counting.
    case lap
}
