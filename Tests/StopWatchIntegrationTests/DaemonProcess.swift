import Foundation
import StopWatchCore

/// A running `stopwatchd`, started for one test and stopped with it.
final class DaemonProcess {
    let process = Process()
    let socket: String
    private let errorPipe = Pipe()
    private(set) var log = ""

    /// Starts `stopwatchd --socket socket` with `arguments` and waits until it answers.
    init(socket: String, arguments: [String] = [], environment: [String: String] = [:], waitUntilReady: Bool = true) throws {
        self.socket = socket
        process.executableURL = URL(fileURLWithPath: Binaries.stopwatchd)
        process.arguments = ["--socket", socket] + arguments
        process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
        process.standardError = errorPipe
        process.standardOutput = FileHandle.nullDevice
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

    /// What the daemon wrote to standard error; complete once it has exited.
    func readLog() -> String {
        if !process.isRunning {
            log += String(decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        return log
    }

    deinit {
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
    }
}
