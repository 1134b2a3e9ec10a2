import Foundation
import StopWatchCore
@testable import StopwatchDaemon

/// State files of counting countdowns, for a daemon to restore.
enum CountdownFiles {
    /// Writes `count` countdowns `c0`, `c1`, … for the daemon of `socket`, started a
    /// millisecond apart and all ending `after` (whole milliseconds, as targets are) from now;
    /// returns that instant, on the boot clock.
    @discardableResult
    static func write(_ count: Int, endingAfter after: Duration, forDaemonOn socket: String) throws -> Duration {
        let stopwatches = DaemonProcess.stateDirectory(for: socket) + "/stopwatches"
        try FileManager.default.createDirectory(atPath: stopwatches, withIntermediateDirectories: true)
        let now = ClockReading.now()
        let instant = now.boot + after
        for index in 0..<count {
            let origin = now.boot - .milliseconds(Int64(index))
            let snapshot = StopWatchSnapshot.counting(since: origin, now: now.boot, target: instant - origin)
            let record = StopwatchRecord(name: "c\(index)", snapshot: snapshot, at: now)
            guard FileManager.default.createFile(atPath: "\(stopwatches)/c\(index).json", contents: Data(record.json.serialized)) else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
        return instant
    }
}
