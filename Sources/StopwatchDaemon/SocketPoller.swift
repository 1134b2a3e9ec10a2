import Dispatch
import LinuxSystem

/// Tells the server's queue when its sockets can be read or written.
///
/// A thread of its own waits in `epoll_wait` and hands each batch of ready sockets to
/// `queue`, where their handlers run. (The sockets were dispatch read and write sources
/// once: with clients connecting and leaving by the thousand, libdispatch's epoll backend
/// used a registration it had freed and crashed the daemon within a minute; see
/// swift-corelibs-libdispatch #949.)
///
/// Each registration has a token never used again, so an event for a socket removed since
/// — its descriptor number perhaps reused already — finds no registration and is dropped.
/// Each is one-shot: after its handler, it is armed again for what its owner then wants.
///
/// `@unchecked Sendable` is safe here: `registrations`, `nextToken`, `delivering` and
/// `isStopped` are read and written only on `queue` (serial); the waiting thread touches
/// only `epoll` and `wakeUp`, which the kernel serializes, `isStopping`, which is `Locked`,
/// and constants.
final class SocketPoller: @unchecked Sendable {
    struct Interest: OptionSet, Sendable {
        let rawValue: UInt8
        static let readable = Interest(rawValue: 1)
        static let writable = Interest(rawValue: 2)
    }

    private struct Registration {
        let socket: FileDescriptor
        let handler: (Interest) -> Void
        var interest: Interest
        /// Armed in the kernel and not yet reported.
        var isArmed: Bool
    }

    private static let wakeUpToken: UInt64 = 0
    private static let eventsPerWait = 64

    private let epoll: EpollDescriptor
    private let wakeUp: EventDescriptor
    private let queue: DispatchQueue
    private let logger: Logger
    /// Called on `queue` when epoll fails, which only a bug can make it do; no socket is
    /// reported any more then.
    private let onFailure: @Sendable (String) -> Void
    private var registrations: [UInt64: Registration] = [:]
    private var nextToken: UInt64 = 1
    /// The registration whose handler runs now: it is armed again when the handler returns.
    private var delivering: UInt64?
    private var isStopped = false
    private let isStopping = Locked(false)
    private let waitingEnded = DispatchSemaphore(value: 0)

    init(queue: DispatchQueue, logger: Logger, onFailure: @escaping @Sendable (String) -> Void) throws(Errno) {
        let epoll = try EpollDescriptor.make()
        let wakeUp: EventDescriptor
        do {
            wakeUp = try EventDescriptor.make()
            try epoll.add(wakeUp.descriptor, for: .readable, token: Self.wakeUpToken)
        } catch {
            epoll.close()
            throw error
        }
        self.epoll = epoll
        self.wakeUp = wakeUp
        self.queue = queue
        self.logger = logger
        self.onFailure = onFailure
        DispatchQueue(label: "stopwatchd.poller").async { self.waitForEvents() }
    }

    /// Starts reporting `socket` to `handler` (on `queue`) when it is ready for `interest`.
    /// The returned token changes the interest and removes it. Call on `queue`.
    func add(_ socket: FileDescriptor, for interest: Interest, handler: @escaping (Interest) -> Void) throws(Errno) -> UInt64 {
        // Stopped, the epoll descriptor is closed and its number perhaps someone else's.
        guard !isStopped else { throw Errno.badDescriptor }
        let token = nextToken
        nextToken += 1
        try epoll.add(socket, for: Self.events(interest), token: token)
        registrations[token] = Registration(socket: socket, handler: handler, interest: interest, isArmed: true)
        return token
    }

    /// What the socket's handler is to be called for from now on. Call on `queue`.
    func setInterest(_ interest: Interest, for token: UInt64) {
        guard !isStopped, var registration = registrations[token], registration.interest != interest else { return }
        registration.interest = interest
        registrations[token] = registration
        // Narrowed: a report of what it no longer wants is ignored, and not armed again.
        if delivering != token, !interest.isEmpty { arm(token) }
    }

    /// Stops reporting the socket. Call on `queue`, before closing it.
    func remove(_ token: UInt64) {
        guard !isStopped, let registration = registrations.removeValue(forKey: token) else { return }
        do {
            try epoll.remove(registration.socket)
        } catch {
            logger.debug("epoll: removing \(registration.socket) failed: \(error)")
        }
    }

    /// Ends the waiting thread. Call on `queue`, after removing every socket.
    func stop() {
        guard !isStopped else { return }
        isStopped = true
        isStopping.withLock { $0 = true }
        wakeUp.signal()
        waitingEnded.wait()
        epoll.close()
        wakeUp.close()
    }

    private func waitForEvents() {
        while true {
            let events: [EpollDescriptor.Event]
            do {
                events = try epoll.wait(maximumCount: Self.eventsPerWait)
            } catch {
                // No client could be served any more, while the watchdog, petted from the
                // queue, would see nothing wrong: the owner is to stop.
                queue.async { self.onFailure("epoll_wait failed: \(error)") }
                waitingEnded.signal()
                return
            }
            // Only `stop` signals the wake-up, so it need not be read.
            if isStopping.withLock({ $0 }) {
                waitingEnded.signal()
                return
            }
            let ready = events.filter { $0.token != Self.wakeUpToken }
            if !ready.isEmpty {
                queue.async { self.deliver(ready) }
            }
        }
    }

    private func deliver(_ events: [EpollDescriptor.Event]) {
        guard !isStopped else { return }
        for event in events {
            guard var registration = registrations[event.token] else { continue }
            registration.isArmed = false
            registrations[event.token] = registration
            var ready = Interest()
            if event.events.contains(.readable) { ready.insert(.readable) }
            if event.events.contains(.writable) { ready.insert(.writable) }
            // A hang-up or an error: whatever it waits for will now fail or end, so let it see.
            if !event.events.isDisjoint(with: [.hangUp, .error]) { ready = registration.interest }
            ready.formIntersection(registration.interest)
            if !ready.isEmpty {
                delivering = event.token
                registration.handler(ready)
                delivering = nil
            }
            if let current = registrations[event.token], !current.isArmed, !current.interest.isEmpty {
                arm(event.token)
            }
        }
    }

    private func arm(_ token: UInt64) {
        guard var registration = registrations[token] else { return }
        do {
            try epoll.modify(registration.socket, for: Self.events(registration.interest), token: token)
            registration.isArmed = true
            registrations[token] = registration
        } catch {
            // EPOLL_CTL_MOD allocates nothing: it fails only for a descriptor closed without
            // being removed first, a bug. The socket would never be reported again (the
            // listener has no deadline to end it): the owner is to stop.
            let failure = "epoll: arming \(registration.socket) failed: \(error)"
            queue.async { self.onFailure(failure) }
        }
    }

    private static func events(_ interest: Interest) -> EpollDescriptor.Events {
        var events: EpollDescriptor.Events = .oneShot
        if interest.contains(.readable) { events.insert(.readable) }
        if interest.contains(.writable) { events.insert(.writable) }
        return events
    }
}
