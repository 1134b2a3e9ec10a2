import Foundation
import LinuxSystem

/// A private temporary directory, with a short path so socket paths fit in `sun_path`.
final class TestDirectory: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/swd-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        path = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    var socket: String { path + "/s.sock" }

    func file(_ name: String) -> String { path + "/" + name }
}
