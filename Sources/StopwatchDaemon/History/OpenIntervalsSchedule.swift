import Dispatch
import StopWatchCore

/// When this device's `open.json` is written (`HistoryJournal.writeOpenIntervals` hands it to
/// `OpenIntervalsFile`, which writes it on a queue of its own): at the
/// daemon's start, once after every change of what counts, and at a clean stop if a change
/// is not written yet. A change is written in a later turn of the queue, never in the one
/// that made it, so the reply of the Start or Stop that caused it does not wait for the file;
/// and at most once a `window`: changes within a window of the last write are written
/// together at its end (a burst of starts and stops, a script toggling in a loop, is one
/// file, not one each). What is written is what counts then.
// Unchecked Sendable, so that its timer's handler and its later turn may hold it: every stored
// property is used only on `queue` (serial), where those run and every caller is.
final class OpenIntervalsSchedule: @unchecked Sendable {
    /// The least time between two writes.
    static let window: Duration = .milliseconds(500)

    private let queue: DispatchQueue
    private let timers: any TickTimerFactory
    private let clock: any StopWatchClock
    private let write: () -> Void
    private var timer: (any TickTimer)?
    /// A change is not written yet.
    private(set) var isDue = false
    /// A write is coming: queued for a later turn, or the timer armed.
    private var isComing = false
    /// When the last write was, on `clock`.
    private var lastWrite: Duration?

    /// - Parameters:
    ///   - timers: what the window's end is waited for on (the clock's).
    ///   - write: writes `open.json` from what counts when it is called.
    init(queue: DispatchQueue, timers: any TickTimerFactory, clock: any StopWatchClock, write: @escaping () -> Void) {
        self.queue = queue
        self.timers = timers
        self.clock = clock
        self.write = write
    }

    deinit {
        timer?.cancel()
    }

    /// What counts changed: written in a later turn, or at the end of the window of the last
    /// write.
    func changed() {
        isDue = true
        guard !isComing else { return }
        isComing = true
        let now = clock.now()
        if let lastWrite, now < lastWrite + Self.window {
            let timer = self.timer ?? makeTimer()
            timer.schedule(at: lastWrite + Self.window, now: now)
        } else {
            queue.async { [weak self] in self?.fire() }
        }
    }

    /// Writes now, at the daemon's start: no window begins, so the first change after is
    /// written in the next turn, as any first change is (a client that starts a stopwatch
    /// and asks another device at once finds it there).
    func writeAtStart() {
        isDue = false
        write()
    }

    /// Writes now if a change is not written yet (a clean stop).
    func flush() {
        if isDue { writeNow() }
    }

    private func writeNow() {
        isDue = false
        lastWrite = clock.now()
        write()
    }

    private func makeTimer() -> any TickTimer {
        let timer = timers.makeTimer(on: queue) { [weak self] _, _ in self?.fire() }
        self.timer = timer
        return timer
    }

    private func fire() {
        isComing = false
        if isDue { writeNow() }
    }
}
