import Dispatch

/// Waits for work the code under test finishes on its own queue (a delivery, a later turn
/// of the queue), up to a deadline; the time it takes is the work's, never a fixed sleep.
enum Deadline {
    /// Whether `condition` held before `timeout` passed.
    static func wait(timeout: Duration = .seconds(10), until condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        let nothing = DispatchSemaphore(value: 0)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            _ = nothing.wait(timeout: .now() + .milliseconds(1))
        }
        return true
    }
}
