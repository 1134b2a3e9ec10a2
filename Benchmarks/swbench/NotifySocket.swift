import Glibc
import LinuxSystem

/// The datagram socket a daemon started with `NOTIFY_SOCKET` reports to, as systemd's
/// would be: swbench binds it, and notes when `READY=1` arrives.
struct NotifySocket {
    let path: String
    private let socket: FileDescriptor

    init(path: String) throws(Errno) {
        self.path = path
        socket = try FileDescriptor.unixDatagramSocket()
        do {
            try socket.bind(toPath: path)
        } catch {
            socket.close()
            throw error
        }
    }

    /// Waits for a datagram holding the line `READY=1` and returns when it arrived (boot
    /// clock); nil if none came within `timeout` or `gaveUp()` said to stop waiting.
    func waitForReady(timeout: Duration, gaveUp: () -> Bool) -> Duration? {
        let deadline = Now.boot() + timeout
        while Now.boot() < deadline {
            guard (try? socket.poll(timeout: .milliseconds(50))) == true else {
                if gaveUp() { return nil }
                continue
            }
            let arrived = Now.boot()
            guard let datagram = try? socket.read(upTo: 4096) else { return nil }
            let lines = String(decoding: datagram, as: UTF8.self).split(separator: "\n")
            if lines.contains("READY=1") { return arrived }
        }
        return nil
    }

    func close() {
        socket.close()
        try? FileSystem.remove(path)
    }
}
