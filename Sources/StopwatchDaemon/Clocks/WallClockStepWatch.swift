import Dispatch
import LinuxSystem

/// Calls back on `queue` each time the wall clock is set — by hand, or stepped by NTP — so
/// that what was stored against the wall clock can be anchored again.
///
/// A `CLOCK_REALTIME` timerfd armed far ahead with `TFD_TIMER_CANCEL_ON_SET`: it never
/// expires, costs no wake-up, and its read fails with `ECANCELED` when the clock is set.
// Sendable without checks, so the read source's handler can hold it weakly: its stored
// properties are set once in init, and the timer is read and re-armed only on `queue`
// (serial), where that handler runs.
final class WallClockStepWatch: @unchecked Sendable {
    private let timer: TimerDescriptor
    private let source: any DispatchSourceRead
    private let onStep: () -> Void

    init(queue: DispatchQueue, onStep: @escaping () -> Void) throws(Errno) {
        // Armed before any property is set: a throwing init runs deinit once all are, and
        // cancelling a source never activated traps.
        let timer = try TimerDescriptor.make(clock: .realtime)
        do {
            try Self.armFarAhead(timer)
        } catch {
            timer.close()
            throw error
        }
        self.timer = timer
        self.onStep = onStep
        source = DispatchSource.makeReadSource(fileDescriptor: timer.descriptor.rawValue, queue: queue)
        source.setEventHandler { [weak self] in self?.readTimer() }
        source.setCancelHandler { timer.close() }
        source.activate()
    }

    deinit {
        source.cancel()
    }

    private static func armFarAhead(_ timer: TimerDescriptor) throws(Errno) {
        // A century from now: it will not expire, only be cancelled.
        try timer.arm(at: Posix.clockTime(.realtime) + .seconds(100 * 365 * 86_400), options: .cancelOnClockSet)
    }

    private func readTimer() {
        do {
            _ = try timer.readExpirations()
        } catch where error == .canceled {
            // Armed again first: a second step while the callback runs is not missed.
            try? Self.armFarAhead(timer)
            onStep()
        } catch {
            // Nothing else is expected of a timerfd read; try to keep watching.
            try? Self.armFarAhead(timer)
        }
    }
}
