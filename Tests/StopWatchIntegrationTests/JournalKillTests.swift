import Foundation
import LinuxSystem
import StopwatchProtocol
import StopwatchdClient
import Testing

/// Every transition one append. `kill -9` while laps are taken
/// as fast as the daemon acknowledges them, over and over: after each restart the stopwatch
/// holds every acknowledged lap (and at most the one in flight besides), in order.
@Suite("journal across kill -9")
struct JournalKillTests {
    @Test("killed mid-laps twenty times: no acknowledged lap lost, none invented")
    func killedDuringLaps() throws {
        let directory = try TestDirectory()
        var daemon = try DaemonProcess(socket: directory.socket, arguments: ["--max-laps", "100000"])
        _ = try StopwatchClient(socketPath: daemon.socket).start("laps")
        var acknowledged: [Int64] = []
        for round in 0..<20 {
            let client = StopwatchClient(socketPath: daemon.socket)
            let taken = Locked<[Int64]>([])
            let stop = Locked(false)
            let lapper = Thread {
                while !stop.withLock({ $0 }) {
                    guard let stopwatch = try? client.lap("laps"), let last = stopwatch.lapsMs.last else { return }
                    taken.withLock { $0.append(last) }
                }
            }
            lapper.start()
            // Killed a few milliseconds into the laps, at a moment that varies.
            Thread.sleep(forTimeInterval: 0.005 + Double(round % 7) * 0.003)
            #expect(daemon.stop(SIGKILL) == 128 + SIGKILL)
            stop.withLock { $0 = true }
            #expect(Deadline.wait { lapper.isFinished })
            acknowledged += taken.withLock { $0 }
            daemon = try DaemonProcess(socket: directory.socket, arguments: ["--max-laps", "100000"])
            let laps = try StopwatchClient(socketPath: daemon.socket).get("laps").lapsMs
            // Every acknowledged lap, in order; at most one more (sent, written, not answered).
            #expect(laps.count >= acknowledged.count && laps.count <= acknowledged.count + 1, "round \(round): \(laps.count) laps, \(acknowledged.count) acknowledged")
            #expect(Array(laps.prefix(acknowledged.count)) == acknowledged, "round \(round)")
            acknowledged = laps
        }
        #expect(acknowledged.count > 20, "laps were taken: \(acknowledged.count)")
        #expect(daemon.stop() == 0)
    }
}
