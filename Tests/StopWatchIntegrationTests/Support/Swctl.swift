import Foundation

/// Runs `swctl` to completion and keeps what it said.
struct Swctl {
    let status: Int32
    let output: String
    let error: String

    var lines: [String] { output.split(separator: "\n").map(String.init) }

    static func run(_ arguments: [String], socket: String?, environment: [String: String] = [:], user: (uid: Int, gid: Int)? = nil) throws -> Swctl {
        var arguments = arguments
        if let socket { arguments = ["--socket", socket] + arguments }
        var executable = Binaries.swctl
        if let user {
            arguments = ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", Binaries.swctl] + arguments
            executable = "/usr/bin/setpriv"
        }
        let result = try ChildProcess.run(executable, arguments, environment: Binaries.childEnvironment.merging(environment) { $1 })
        return Swctl(status: result.status, output: result.output, error: result.error)
    }
}

/// A `swctl` left running (for `watch`), read line by line.
final class SwctlProcess {
    let child: ChildProcess
    let lines: LineReader

    init(_ arguments: [String], socket: String, environment: [String: String] = [:]) throws {
        child = try ChildProcess(
            Binaries.swctl, ["--socket", socket] + arguments,
            environment: Binaries.childEnvironment.merging(environment) { $1 },
            captureOutput: true
        )
        lines = LineReader(child.output!)
    }

    var isRunning: Bool { child.isRunning }
}
