import Dispatch

/// The durable work done after a change is told, on a serial queue of its own: an automatic
/// phase's history line flushed (`HistoryJournal.handOverFlush`), and the state files of
/// expiries and phases written (`StateStore.saveSoon`). Each costs an `fdatasync` or two,
/// usually a millisecond, at times 10–80 ms on a virtual disk; done on the serving queue, the
/// next instant (a phase 10 ms later) would wait behind it (docs/PERFORMANCE.md, issue 29).
///
/// Work runs in the order it is handed over: a history flush handed over before a batch of
/// state files has run before any of them is written, so no state file reaches the disk
/// before the history's lines it follows from were flushed. (A flush that failed does not
/// stop the batch: its lines wait in memory to be written again, as after any failed
/// flush, while the state is saved.)
///
/// Threading:
/// - `queue`: its own, serial. The work handed over runs there and touches only what it was
///   given: values, descriptors duplicated for it (which it closes), and a `Locked` box for
///   its result. Never its owner's state; its owner learns the result on the serving queue.
/// - `hand` may be called on any thread (the serving queue does).
/// - `drain` blocks until the work handed over so far has run. Called on the serving queue,
///   never on `queue`, and `queue` never waits on another queue: it cannot deadlock.
final class DurableWriter: Sendable {
    private let queue = DispatchQueue(label: "stopwatchd.durable")

    init() {}

    /// Runs `work` on the writer's queue, after all handed over before it.
    func hand(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Returns once the work handed over so far has run.
    func drain() {
        dispatchPrecondition(condition: .notOnQueue(queue))
        queue.sync {}
    }
}
