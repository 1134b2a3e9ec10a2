/// A command the stopwatch refuses in its current state: `reset` while counting, `lap`
/// while not counting, or a transition at an earlier instant than it may be. Nothing changed.
public struct InvalidTransition: Error, Equatable, Sendable {
    public let command: StopWatchCommand
    /// The stopwatch as it was, and still is.
    public let snapshot: StopWatchSnapshot
    /// For a transition at an earlier instant refused as too early (before the latest
    /// transition, the counting interval's start or a lap): how far back it may be at most,
    /// from the moment of the command, in wall-clock time (the boot clock's, suspend
    /// included). Nil for a command refused whenever it comes.
    public let earliestAgo: Duration?

    public init(command: StopWatchCommand, snapshot: StopWatchSnapshot, earliestAgo: Duration? = nil) {
        self.command = command
        self.snapshot = snapshot
        self.earliestAgo = earliestAgo
    }
}
