import Dispatch
import LinuxSystem

/// A `TickTimer` on a `DispatchSourceTimer`.
///
/// `@unchecked Sendable` is safe here: the only stored state besides the lock is the
/// `DispatchSourceTimer`, whose `schedule` and `cancel` libdispatch documents as callable
/// from any thread.
final class DispatchTickTimer: TickTimer, @unchecked Sendable {
    private let source: any DispatchSourceTimer
    private let deadline = Locked(Duration.zero)
    private let leeway: DispatchTimeInterval

    init(
        queue: DispatchQueue,
        leeway: DispatchTimeInterval,
        handler: @escaping @Sendable (any TickTimer, Duration) -> Void
    ) {
        self.source = DispatchSource.makeTimerSource(queue: queue)
        self.leeway = leeway
        source.setEventHandler { [weak self] in
            guard let self else { return }
            handler(self, self.deadline.withLock { $0 })
        }
        source.activate()
    }

    deinit {
        source.cancel()
    }

    func schedule(at deadline: Duration, now: Duration) {
        self.deadline.withLock { $0 = deadline }
        let delay = max(deadline - now, .zero)
        source.schedule(deadline: .now() + .nanoseconds(Int(delay.nanoseconds)), leeway: leeway)
    }

    func cancel() {
        source.cancel()
    }
}

/// Makes `DispatchTickTimer`s, which fire on libdispatch's monotonic clock. The stopwatch
/// re-reads its own clock when one fires, so a difference between the two clocks (time in
/// suspend) costs at most one late tick, never a wrong elapsed time.
public struct DispatchTickTimerFactory: TickTimerFactory {
    /// How late a tick may fire so the system can batch wake-ups.
    public var leeway: DispatchTimeInterval

    public init(leeway: DispatchTimeInterval = .milliseconds(1)) {
        self.leeway = leeway
    }

    public func makeTimer(
        on queue: DispatchQueue,
        handler: @escaping @Sendable (any TickTimer, Duration) -> Void
    ) -> any TickTimer {
        DispatchTickTimer(queue: queue, leeway: leeway, handler: handler)
    }
}
