import Foundation

/// Runs `swctl` to completion and keeps what it said.
struct Swctl {
    let status: Int32
    let output: String
    let error: String

    var lines: [String] { output.split(separator: "\n").map(String.init) }

    static func run(_ arguments: [String], socket: String?, environment: [String: String] = [:], user: (uid: Int, gid: Int)? = nil) throws -> Swctl {
        let process = Process()
        var arguments = arguments
        if let socket { arguments = ["--socket", socket] + arguments }
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", Binaries.swctl] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: Binaries.swctl)
            process.arguments = arguments
        }
        process.environment = Binaries.childEnvironment.merging(environment) { $1 }
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Swctl(
            status: process.terminationStatus,
            output: String(decoding: outputData, as: UTF8.self),
            error: String(decoding: errorData, as: UTF8.self)
        )
    }
}

/// A `swctl` left running (for `watch`), read line by line.
final class SwctlProcess {
    let process = Process()
    let lines: LineReader

    init(_ arguments: [String], socket: String, environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: Binaries.swctl)
        process.arguments = ["--socket", socket] + arguments
        process.environment = Binaries.childEnvironment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        lines = LineReader(output.fileHandleForReading)
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
