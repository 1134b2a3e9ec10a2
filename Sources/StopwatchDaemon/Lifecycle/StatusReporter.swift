import Dispatch

/// Keeps systemd's `STATUS=` line current without paying for it on every call: a change
/// only marks it stale, and one timer sends the new text at most every `delay`. No change,
/// no timer: an idle daemon wakes up for nothing.
///
/// `@unchecked Sendable` is safe here: its mutable state is read and written only on
/// `queue` (a serial queue): `send` and `changed` are called there, and its timer runs there.
final class StatusReporter: @unchecked Sendable {
    private let notifier: SystemdNotifier?
    private let queue: DispatchQueue
    private let delay: Duration
    private let describe: () -> String
    private var lastSent: String?
    private var isPending = false
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
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(delay.nanoseconds))) { [weak self] in
            guard let self else { return }
            self.isPending = false
            let text = self.text
            guard text != self.lastSent else { return }
            self.lastSent = text
            self.notifier?.notify(["STATUS=\(text)"])
        }
    }
}
