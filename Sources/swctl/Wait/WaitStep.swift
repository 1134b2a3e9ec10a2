/// What `WaitMachine` asks of its caller after an update, when not to go on reading.
package enum WaitStep: Equatable, Sendable {
    /// The wait ends so.
    case finish(WaitOutcome)
    /// After a reconnection the stopwatch reads as never started, and did not before: it
    /// was removed meanwhile, or it is a plain stopwatch that was reset. The state cannot
    /// tell them apart; `List` can. The caller calls it and hands whether the name is in it
    /// to `WaitMachine.listed(_:)`.
    case checkListed
}
