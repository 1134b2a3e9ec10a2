import Dispatch
import LinuxSystem

/// Serves the server's sockets and deadlines from one thread of its own, without handing
/// anything over to another thread.
///
/// The thread waits in `epoll_wait`, then enters the server's queue with `sync` and runs the
/// handlers of the ready sockets and due deadlines there. The queue is idle nearly always,
/// and `sync` on an idle serial queue runs on the calling thread: a call is read, answered
/// and written on the thread that learnt it had come, like sd-event's or SwiftNIO's loops.
/// When the queue is busy (a tick being written to watchers), the thread waits its turn.
/// The queue stays the one place where the server's state is touched, whichever thread is
/// on it. (Dispatch sources once did this job: two thread hand-offs per call, and, with
/// clients coming and going by the thousand, libdispatch's epoll backend used a registration
/// it had freed and crashed the daemon; swift-corelibs-libdispatch #949.)
///
/// Registrations are level-triggered: a socket is reported while it is ready for what its
/// owner wants, and changing that is one `epoll_ctl`. Each has a token never used again,
/// so an event for a socket removed since (its number perhaps reused) is dropped.
/// Deadlines share one `timerfd` armed for the nearest (`Deadlines`). Other timers may be
/// registered as sockets are (`LoopTimer`: the countdowns' expiries, the `STATUS=` update),
/// so that they too run on this thread.
///
/// `@unchecked Sendable` is safe here: `registrations`, `nextToken`, `deadlines`,
/// `armedDeadline`, `isStopped` and `onFailure` are read and written only on `queue` (serial); the
/// waiting thread itself touches only `epoll` (the kernel serializes it), `isStopping`,
/// which is `Locked`, and constants. It closes the descriptors under that lock, once
/// stopped, after which nothing on `queue` uses them (`isStopped`), and `stop` signals
/// `wakeUp` under the same lock.
final class ServingLoop: @unchecked Sendable {
    struct Interest: OptionSet, Sendable {
        let rawValue: UInt8
        static let readable = Interest(rawValue: 1)
        static let writable = Interest(rawValue: 2)
    }

    typealias Token = UInt64

    private struct Registration {
        let socket: FileDescriptor
        let handler: (Interest) -> Void
        var interest: Interest
    }

    private static let wakeUpToken: Token = 0
    private static let timerToken: Token = 1
    private static let eventsPerWait = 64

    private let epoll: EpollDescriptor
    private let wakeUp: EventDescriptor
    private let timer: TimerDescriptor
    private let queue: DispatchQueue
    private let logger: Logger
    /// Called on `queue` when epoll fails, which only a bug can make it do; nothing is
    /// served any more then. Set on `queue` (the server sets it as it starts): a failure
    /// before that is told as soon as it is set, so a loop whose thread has ended is never
    /// taken for serving.
    var onFailure: (@Sendable (String) -> Void)? {
        didSet {
            guard let onFailure, let failure = failureUntold else { return }
            failureUntold = nil
            onFailure(failure)
        }
    }
    /// A failure that came while nobody was told (`onFailure` nil).
    private var failureUntold: String?
    private var registrations: [Token: Registration] = [:]
    private var nextToken: Token = 2
    private var deadlines = Deadlines()
    /// Where `timer` is armed, if it is.
    private var armedDeadline: Duration?
    private var isStopped = false
    private let isStopping = Locked(false)

    init(queue: DispatchQueue, logger: Logger, onFailure: (@Sendable (String) -> Void)? = nil) throws(Errno) {
        let epoll = try EpollDescriptor.make()
        var made: (wakeUp: EventDescriptor?, timer: TimerDescriptor?) = (nil, nil)
        do throws(Errno) {
            let wakeUp = try EventDescriptor.make()
            made.wakeUp = wakeUp
            try epoll.add(wakeUp.descriptor, for: .readable, token: Self.wakeUpToken)
            let timer = try TimerDescriptor.make(clock: .monotonic)
            made.timer = timer
            try epoll.add(timer.descriptor, for: .readable, token: Self.timerToken)
            self.wakeUp = wakeUp
            self.timer = timer
        } catch {
            made.timer?.close()
            made.wakeUp?.close()
            epoll.close()
            throw error
        }
        self.epoll = epoll
        self.queue = queue
        self.logger = logger
        self.onFailure = onFailure
        // A thread of its own for good: the wait blocks it.
        DispatchQueue(label: "stopwatchd.serving-loop").async { self.serve() }
    }

    /// The clock of deadlines (`CLOCK_MONOTONIC`).
    func now() -> Duration {
        Posix.clockTime(.monotonic)
    }

    // MARK: Sockets (call on `queue`)

    /// Starts calling `handler` (on `queue`) while `socket` is ready for `interest`. The
    /// returned token changes the interest and removes it.
    func add(_ socket: FileDescriptor, for interest: Interest, handler: @escaping (Interest) -> Void) throws(Errno) -> Token {
        // Stopped, the epoll descriptor is closed and its number perhaps someone else's.
        guard !isStopped else { throw Errno.badDescriptor }
        let token = nextToken
        nextToken += 1
        try epoll.add(socket, for: Self.events(interest), token: token)
        registrations[token] = Registration(socket: socket, handler: handler, interest: interest)
        return token
    }

    /// What the socket's handler is to be called for from now on.
    func setInterest(_ interest: Interest, for token: Token) {
        guard !isStopped, var registration = registrations[token], registration.interest != interest else { return }
        registration.interest = interest
        registrations[token] = registration
        do {
            try epoll.modify(registration.socket, for: Self.events(interest), token: token)
        } catch {
            // EPOLL_CTL_MOD allocates nothing: it fails only for a descriptor closed without
            // being removed first, a bug. The socket would never be served again.
            fail("epoll: changing \(registration.socket) failed: \(error)")
        }
    }

    /// Stops reporting the socket. Call before closing it.
    func remove(_ token: Token) {
        guard !isStopped, let registration = registrations.removeValue(forKey: token) else { return }
        do {
            try epoll.remove(registration.socket)
        } catch {
            logger.debug("epoll: removing \(registration.socket) failed: \(error)")
        }
    }

    // MARK: Deadlines (call on `queue`)

    /// Calls `handler` on `queue` once `now()` reaches `deadline`, unless cancelled first.
    func schedule(at deadline: Duration, _ handler: @escaping () -> Void) -> Token {
        let token = nextToken
        nextToken += 1
        deadlines.insert(token, at: deadline, handler)
        armTimer()
        return token
    }

    func cancel(_ deadline: Token) {
        deadlines.remove(deadline)
    }

    /// Ends the waiting thread, which closes the descriptors. Call on `queue`, after removing
    /// every socket; timers still registered (the countdowns' and `STATUS=`'s `LoopTimer`s,
    /// kept for the daemon's life) fire no more: the daemon is stopping. It does not wait for the thread,
    /// which may be waiting for the queue.
    func stop() {
        guard !isStopped else { return }
        isStopped = true
        // Under the lock the thread closes the descriptors under: the wake-up cannot be
        // signalled after it is closed.
        isStopping.withLock { isStopping in
            isStopping = true
            wakeUp.signal()
        }
    }

    // MARK: The waiting thread

    private func serve() {
        while true {
            let events: [EpollDescriptor.Event]
            do {
                events = try epoll.wait(maximumCount: Self.eventsPerWait)
            } catch {
                // No client could be served any more, while the watchdog, petted from the
                // queue, would see nothing wrong: the owner is to stop.
                fail("epoll_wait failed: \(error)")
                return
            }
            // Only `stop` signals the wake-up, so it need not be read.
            let stopped = isStopping.withLock { isStopping in
                if isStopping {
                    timer.close()
                    wakeUp.close()
                    epoll.close()
                }
                return isStopping
            }
            if stopped { return }
            if !events.isEmpty {
                queue.sync { self.deliver(events) }
            }
        }
    }

    private func deliver(_ events: [EpollDescriptor.Event]) {
        for event in events where !isStopped {
            if event.token == Self.timerToken {
                runDueDeadlines()
                continue
            }
            guard let registration = registrations[event.token] else { continue }
            var ready = Interest()
            if event.events.contains(.readable) { ready.insert(.readable) }
            if event.events.contains(.writable) { ready.insert(.writable) }
            // A hang-up or an error: whatever it waits for will now fail or end, so let it see.
            // (Two `contains`, not `isDisjoint(with: [...])`: that built the set through the
            // generic `SetAlgebra` initializer at every event.)
            if event.events.contains(.hangUp) || event.events.contains(.error) { ready = registration.interest }
            ready.formIntersection(registration.interest)
            if !ready.isEmpty { registration.handler(ready) }
        }
    }

    private func runDueDeadlines() {
        // Read, or the level-triggered timer stays ready.
        _ = try? timer.readExpirations()
        armedDeadline = nil
        let now = now()
        while !isStopped, let handler = deadlines.removeDue(at: now) {
            handler()
        }
        armTimer()
    }

    private func armTimer() {
        guard !isStopped, let nearest = deadlines.nearest else { return }
        if let armedDeadline, armedDeadline <= nearest { return }
        do {
            try timer.arm(at: nearest)
            armedDeadline = nearest
        } catch {
            fail("timerfd: arming failed: \(error)")
        }
    }

    /// Tells the owner, after the handler running now: it is to stop, which closes every
    /// connection, perhaps the one whose handler called this.
    private func fail(_ failure: String) {
        queue.async {
            guard !self.isStopped else { return }
            if let onFailure = self.onFailure {
                onFailure(failure)
            } else {
                self.failureUntold = failure
            }
        }
    }

    /// Level-triggered; with nothing wanted, one-shot, so that a hang-up (which epoll
    /// reports whatever is asked) is reported once, not at every wait.
    private static func events(_ interest: Interest) -> EpollDescriptor.Events {
        var events: EpollDescriptor.Events = interest.isEmpty ? .oneShot : []
        if interest.contains(.readable) { events.insert(.readable) }
        if interest.contains(.writable) { events.insert(.writable) }
        return events
    }
}
