import LinuxSystem
import StopwatchdClient

extension ClientError {
    /// What `swctl` says of this error (after "swctl: "): its description, but for a daemon
    /// not found by a `swctl` run from a checkout's `.build` folder, where `stopwatchd` is
    /// not on the PATH and `swift run stopwatchd` starts one. The program's path is read
    /// only then, on this error's path.
    var swctlMessage: String { message(executable: { CurrentProcess.executablePath }) }

    /// `swctlMessage`, with `executable` this program's path (nil: unknown).
    func message(executable: () -> String?) -> String {
        guard case .unreachable(let path, let reason) = self, let executable = executable(), Self.isInBuildFolder(executable) else {
            return description
        }
        return Self.unreachableMessage(path: path, reason: reason, start: "'swift run stopwatchd' in another terminal of this checkout")
    }

    /// Whether `executable` was built in a checkout: in SwiftPM's `.build`, or a scratch
    /// path beside it (`.build-release` as `make` builds, `.build-tsan`).
    static func isInBuildFolder(_ executable: String) -> Bool {
        executable.split(separator: "/").contains { $0 == ".build" || $0.hasPrefix(".build-") }
    }
}
