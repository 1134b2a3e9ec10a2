import LinuxSystem
import StopwatchProtocol
import StopwatchdClient

/// `swctl wait`: the blocking side of `WaitMachine`. Watches the stopwatch, hands each
/// update to the machine, and exits as it decides. A daemon that goes away after the first
/// connection (a restart, a `kill -9`) is waited for, with `Watcher`'s backoff; the
/// `--timeout` counts on the monotonic clock from the start, across reconnections.
///
/// The first reply of each connection, `current`, is the daemon's answer to the call, and is
/// read with a call's timeout (`client.timeout`), not `--timeout`: it is what tells whether
/// the wait is already over, so even `--timeout 0s` on a countdown already expired exits 0
/// (SPEC §5), however soon the answer comes. `--timeout` bounds the wait for the replies
/// after it, and for the first reply of a reconnection (within the call's timeout still).
struct Waiter {
    let client: StopwatchClient
    let name: String?
    let condition: WaitCondition?
    let timeout: Duration?

    func run() -> Never {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        var machine = WaitMachine(condition: condition)
        var connectedOnce = false
        var retry = Watcher.firstRetry
        while true {
            // (The first connection is made, and answered, whatever the timeout: an expiry
            // already there ends even `--timeout 0s` with 0.)
            if connectedOnce, let deadline, ContinuousClock.now >= deadline { finish(.timedOut) }
            do {
                // A reconnection's answer is bounded by `--timeout` too: an ssh to a host gone
                // silent would otherwise hold the wait a whole call timeout past it.
                var firstReplyTimeout = client.timeout
                if connectedOnce, let deadline { firstReplyTimeout = min(firstReplyTimeout, max(.zero, deadline - ContinuousClock.now)) }
                // So is a `List` after it; at the start, `List` is part of the answer (is it done
                // already?), as the first reply is.
                let listsWithinTimeout = connectedOnce
                let stream = try client.openWatch(name)
                defer { stream.close() }
                // A socket connected is a daemon there (which may die before it answers: a
                // restart to wait for). Through ssh it is only an ssh started, which may still
                // fail to connect: connected once the daemon answered.
                if case .socket = client.endpoint { connectedOnce = true }
                var first = true
                while true {
                    let update: WatchUpdate
                    if first {
                        update = try stream.firstUpdate(within: firstReplyTimeout)
                        connectedOnce = true
                        first = false
                    } else if let deadline {
                        guard let next = try stream.nextUpdate(before: deadline) else { finish(.timedOut) }
                        update = next
                    } else {
                        update = try stream.nextUpdate()
                    }
                    retry = Watcher.firstRetry
                    switch machine.observe(update) {
                    case nil: break
                    case .finish(let outcome): finish(outcome)
                    case .checkListed:
                        // Removed or reset while we were away, or, at the start, maybe never
                        // created. A failure here is handled as the watch's own: the next
                        // connection asks again.
                        // Byte for byte: names are compared as given, and "café" has two spellings.
                        var lister = client
                        if listsWithinTimeout, let deadline { lister.timeout = min(client.timeout, max(.zero, deadline - ContinuousClock.now)) }
                        let names = try lister.list().map(\.name)
                        let listed = names.contains { $0.utf8.elementsEqual(shownName.utf8) }
                        if let outcome = machine.listed(listed) { finish(outcome, listed: names) }
                    }
                }
            } catch {
                // No daemon at the start is exit 69 at once: nothing to wait for yet, and
                // most likely a wrong socket (or host). Later, it is a restart (or an ssh
                // connection lost): wait for it. A connection that ended before the call was
                // even sent was a daemon there too (killed between the connect and the send).
                if case .connectionClosed = error, case .socket = client.endpoint { connectedOnce = true }
                guard connectedOnce, error.isUnreachable else {
                    Diagnostics.fail("swctl: \(error.swctlMessage)", status: error.exitStatus)
                }
                var pause = retry
                if let deadline { pause = min(pause, max(.zero, deadline - ContinuousClock.now)) }
                CurrentProcess.sleep(for: pause)
                retry = min(retry * 2, Watcher.longestRetry)
            }
        }
    }

    /// The name as the daemon has it: `List` names the default one too.
    private var shownName: String { name ?? StopwatchName.defaultName }

    /// Quiet but for a removal or a name never created: `swctl wait tea && …` wants an exit
    /// status, and a timeout is as expected as the event (timeout(1) says nothing either).
    /// `listed`: the names `List` gave, when it was asked (for a name close to one never
    /// created).
    private func finish(_ outcome: WaitOutcome, listed: [String]? = nil) -> Never {
        switch outcome {
        case .removed:
            Diagnostics.fail("swctl: '\(shownName)' was removed while waiting for it: nothing left to wait for", status: outcome.exitStatus)
        case .neverCreated:
            Diagnostics.fail(MissingStopwatch.message(shownName, listed: listed), status: outcome.exitStatus)
        case .happened, .timedOut:
            CurrentProcess.exit(outcome.exitStatus)
        }
    }
}

extension ClientError {
    /// Whether no daemon answered, here (`unreachable`) or through ssh (`bridgeFailed`), or
    /// the one that did went away (`connectionClosed`): what `watch` and `wait` retry after
    /// their first connection, as a daemon's restart.
    fileprivate var isUnreachable: Bool {
        switch self {
        case .unreachable, .connectionClosed, .bridgeFailed: true
        default: false
        }
    }
}
