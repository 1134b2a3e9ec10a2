/// A command the stopwatch refuses in its current state: `reset` while counting, `lap`
/// while not counting. Nothing changed.
public struct InvalidTransition: Error, Equatable, Sendable {
    public let command: StopWatchCommand
    /// The stopwatch as it was, and still is.
    public let snapshot: StopWatchSnapshot

    public init(command: StopWatchCommand, snapshot: StopWatchSnapshot) {
        self.command = command
        self.snapshot = snapshot
    }
}
