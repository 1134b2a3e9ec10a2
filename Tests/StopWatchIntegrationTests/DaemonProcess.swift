import Foundation
import StopWatchCore
import Testing

/// A running `stopwatchd`, started for one test and stopped with it.
///
/// Its standard error is read as it comes (a pipe nobody reads would fill and block the
/// daemon), and when the test lets go of it the daemon is stopped with SIGTERM and must exit
/// 0 with no sanitizer report in its log.
final class DaemonProcess {
    let process = Process()
    let socket: String
    private let errorPipe = Pipe()
    private let logBuffer = Locked("")

    /// Starts `stopwatchd --socket socket` with `arguments` and waits until it answers.
    init(socket: String, arguments: [String] = [], environment: [String: String] = [:], waitUntilReady: Bool = true) throws {
        self.socket = socket
        process.executableURL = URL(fileURLWithPath: Binaries.stopwatchd)
        process.arguments = ["--socket", socket] + arguments
        process.environment = Binaries.childEnvironment.merging(environment) { $1 }
        process.standardError = errorPipe
        process.standardOutput = FileHandle.nullDevice
        let buffer = logBuffer
        errorPipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            buffer.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        if waitUntilReady {
            let ready = Deadline.wait { (try? StopWatchClient(socketPath: socket, timeout: .seconds(2)).list()) != nil || !process.isRunning }
            guard ready, process.isRunning else {
                throw DaemonFailed(message: "stopwatchd did not become ready: \(readLog())")
            }
        }
    }

    struct DaemonFailed: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    var pid: pid_t { process.processIdentifier }

    /// Sends `signal` and waits for the exit; returns the exit status (or the signal number
    /// for a death by signal).
    @discardableResult
    func stop(_ signal: Int32 = SIGTERM) -> Int32 {
        if process.isRunning { kill(pid, signal) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// What the daemon wrote to standard error so far (all of it, once it has exited).
    func readLog() -> String {
        if !process.isRunning {
            errorPipe.fileHandleForReading.readabilityHandler = nil
            let rest = errorPipe.fileHandleForReading.readDataToEndOfFile()
            logBuffer.withLock { $0 += String(decoding: rest, as: UTF8.self) }
        }
        return logBuffer.withLock { $0 }
    }

    deinit {
        // One that already ended was stopped or failed on purpose: its test looked at why.
        guard process.isRunning else { return }
        kill(pid, SIGTERM)
        process.waitUntilExit()
        let log = readLog()
        if process.terminationReason == .exit, process.terminationStatus != 0 || log.contains("Sanitizer") {
            // A daemon stopped for the test must stop cleanly, and with nothing for a sanitizer to say.
            Issue.record("stopwatchd exited \(process.terminationStatus) on SIGTERM; log:\n\(log)")
        }
    }
}
