import Foundation

/// Waits for a condition with a deadline, polling: for integration tests that watch real
/// processes, which cannot inject time. Generous on purpose.
enum Deadline {
    @discardableResult
    static func wait(_ timeout: Duration = .seconds(20), until condition: () throws -> Bool) rethrows -> Bool {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if try condition() { return true }
            usleep(10_000)
        }
        return try condition()
    }
}
