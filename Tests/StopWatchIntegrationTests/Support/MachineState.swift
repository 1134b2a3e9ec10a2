import Foundation

/// Tests that change the machine's own state (its clock) run only when asked, with
/// `STOPWATCHD_TEST_SYSTEM=1`, as `.ci/run` sets: a plain `swift test`, even as root, leaves
/// the machine alone, and such a test says why it skipped. CONTRIBUTING.md lists each one,
/// and `Tests/lint/machine-state.sh` checks that every call that changes the machine is in a
/// test with this trait.
enum MachineState {
    static var mayChange: Bool { ProcessInfo.processInfo.environment["STOPWATCHD_TEST_SYSTEM"] == "1" }
}
