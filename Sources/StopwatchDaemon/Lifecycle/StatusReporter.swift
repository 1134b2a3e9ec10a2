import Dispatch
import StopWatchCore

/// Keeps systemd's `STATUS=` line current without paying for it on every call: a change
/// only marks it stale, and one timer sends the new text at most every `delay`. No change,
/// no timer: an idle daemon wakes up for nothing.
///
/// The timer is the serving loop's (`useTimers`, a `LoopTimer`: its thread runs the send,
/// as it does an expiry). A dispatch timer (`asyncAfter`) woke libdispatch's timer thread to
/// arm it and a worker to run it: four context switches of each expiry that changed the
/// counts (issue 30). Changes before the loop exists (the restore) are sent once it does.
///
/// `@unchecked Sendable` is safe here: its mutable state is read and written only on
/// `queue` (a serial queue): `send`, `changed` and `useTimers` are called there, and its
/// timer's handler runs there.
final class StatusReporter: @unchecked Sendable {
    private let notifier: SystemdNotifier?
    private let queue: DispatchQueue
    private let delay: Duration
    private let describe: () -> String
    private var lastSent: String?
    private var isPending = false
    /// The pending send's timer and the clock it is read on, once `useTimers` gave them.
    private var timer: (any TickTimer)?
    private var now: (() -> Duration)?
    /// Why stopwatches are not being saved, if they are not: shown after the counts.
    private var savingProblem: String?
    /// What is wrong with the history (writing, a month that cannot be read), if anything.
    private var historyProblem: String?

    init(notifier: SystemdNotifier?, queue: DispatchQueue, delay: Duration = .milliseconds(200), describe: @escaping () -> String) {
        self.notifier = notifier
        self.queue = queue
        self.delay = delay
        self.describe = describe
    }

    /// Sends `fields` with the current status at once (READY=1, STOPPING=1), and `note`
    /// after it (why it stops).
    func send(_ fields: [String], note: String? = nil) {
        var text = self.text
        if let note { text += "; \(note)" }
        lastSent = text
        notifier?.notify(fields + ["STATUS=\(text)"])
    }

    func savingProblemChanged(_ problem: String?) {
        savingProblem = problem
        changed()
    }

    func historyProblemChanged(_ problem: String?) {
        historyProblem = problem
        changed()
    }

    private var text: String {
        var text = savingProblem.map { "\(describe()); NOT SAVING: \($0)" } ?? describe()
        if let historyProblem { text += "; \(historyProblem)" }
        return text
    }

    func changed() {
        guard notifier != nil, !isPending else { return }
        isPending = true
        arm()
    }

    /// From now on the pending send waits on a timer of `timers` (the loop's), read on `now`
    /// (its clock); one already pending is armed on it.
    func useTimers(_ timers: any TickTimerFactory, now: @escaping () -> Duration) {
        guard notifier != nil, timer == nil else { return }
        self.now = now
        timer = timers.makeTimer(on: queue) { [weak self] _, _ in self?.sendPending() }
        if isPending { arm() }
    }

    private func arm() {
        guard let timer, let now else { return }
        let instant = now()
        timer.schedule(at: instant + delay, now: instant)
    }

    private func sendPending() {
        guard isPending else { return }
        isPending = false
        let text = self.text
        guard text != lastSent else { return }
        lastSent = text
        notifier?.notify(["STATUS=\(text)"])
    }
}
