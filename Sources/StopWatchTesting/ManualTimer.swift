import LinuxSystem
import Dispatch
import StopWatchCore

/// A `TickTimer` that fires only when a test says so (through `ManualTime`).
public final class ManualTimer: TickTimer, Sendable {
    /// Which clock it runs on, which matters only through a `ManualTime.suspend`.
    public enum Clock: Sendable {
        /// Stops in suspend, as libdispatch's timers do.
        case monotonic
        /// Counts suspend, as a `timerfd` on `CLOCK_BOOTTIME` does.
        case boot
        /// Its deadline is a reading of the awake clock, as a `timerfd` on `CLOCK_MONOTONIC`'s
        /// is: through a suspend it neither moves nor comes due.
        case awake
    }

    public let clock: Clock
    private let queue: DispatchQueue
    private let handler: @Sendable (any TickTimer, Duration) -> Void
    private let state = Locked<(deadline: Duration?, isCancelled: Bool, fireCount: Int)>((nil, false, 0))

    init(queue: DispatchQueue, clock: Clock, handler: @escaping @Sendable (any TickTimer, Duration) -> Void) {
        self.queue = queue
        self.clock = clock
        self.handler = handler
    }

    /// When the timer will fire; nil when not armed.
    public var deadline: Duration? { state.withLock { $0.deadline } }
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }
    /// How many times the handler ran.
    public var fireCount: Int { state.withLock { $0.fireCount } }

    public func schedule(at deadline: Duration, now: Duration) {
        state.withLock { $0.deadline = deadline }
    }

    public func cancel() {
        state.withLock {
            $0.isCancelled = true
            $0.deadline = nil
        }
    }

    /// A monotonic timer through a suspend: it fires that much later on the boot clock.
    func postpone(by duration: Duration) {
        state.withLock { state in state.deadline = state.deadline.map { $0 + duration } }
    }

    func isDue(at now: StopWatchInstant) -> Bool {
        let reading = clock == .awake ? now.awake : now.boot
        return state.withLock { !$0.isCancelled && ($0.deadline.map { $0 <= reading } ?? false) }
    }

    /// When it is due on the boot clock, given how far the awake clock lags behind it.
    func bootDeadline(awakeLag: Duration) -> Duration? {
        guard let deadline else { return nil }
        return clock == .awake ? deadline + awakeLag : deadline
    }

    /// Runs the handler on the timer's queue and waits for it; one-shot, like the real timer.
    func fire() {
        queue.sync {
            let deadline: Duration? = state.withLock { state in
                guard !state.isCancelled, let deadline = state.deadline else { return nil }
                state.deadline = nil
                state.fireCount += 1
                return deadline
            }
            if let deadline {
                handler(self, deadline)
            }
        }
    }
}
