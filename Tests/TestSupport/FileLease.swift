import Glibc
import LinuxSystem

/// A write lease on a file, as a file server (Samba, an NFS server) takes one: while it is
/// held, an open of the file with `O_NONBLOCK`, the way the daemon opens a history month,
/// fails with `EWOULDBLOCK`, even for root. A regular file that exists and cannot be opened,
/// with no test seam in the daemon. Only a file nobody else has open can be leased.
///
/// Not for ever: the first open refused starts the kernel's lease-break timer, and once
/// `/proc/sys/fs/lease-break-time` seconds have passed (45 by default) the kernel breaks
/// the lease itself and opens succeed. A test that relies on the lease must be done by
/// then: it checks `lastsLongEnough` and is skipped, saying why, when the machine's
/// setting is shorter.
package final class FileLease {
    // Linux's fcntl commands, not exported by Glibc's module (they need _GNU_SOURCE).
    private static let setLease: CInt = 1024
    private static let setSignal: CInt = 10

    private var descriptor: CInt

    package init(_ path: String) throws(Errno) {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .current }
        // The break is told with a signal: SIGURG, ignored by default, not SIGIO, which ends
        // the process.
        guard fcntl(descriptor, Self.setSignal, SIGURG) == 0, fcntl(descriptor, Self.setLease, CInt(F_WRLCK)) == 0 else {
            let error = Errno.current
            close(descriptor)
            throw error
        }
    }

    /// Whether leases can be taken here (the file system may not allow them).
    package static var work: Bool {
        var template = Array("/tmp/swlease-XXXXXX".utf8CString)
        let file = mkstemp(&template)
        guard file >= 0 else { return false }
        close(file)
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(path) }
        guard let lease = try? FileLease(path) else { return false }
        lease.release()
        return true
    }

    /// `/proc/sys/fs/lease-break-time`: how long, in seconds, a lease holds once an open is
    /// refused; nil when it cannot be read.
    package static var breakTime: Int? {
        let file = open("/proc/sys/fs/lease-break-time", O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return Int(String(decoding: bytes[..<count], as: UTF8.self).filter { !$0.isWhitespace })
    }

    /// Whether a lease holds for at least `seconds` once an open is refused, as a test that
    /// takes up to that long needs.
    package static func lastsLongEnough(_ seconds: Int) -> Bool {
        (breakTime ?? 0) >= seconds
    }

    package func release() {
        guard descriptor >= 0 else { return }
        _ = fcntl(descriptor, Self.setLease, CInt(F_UNLCK))
        close(descriptor)
        descriptor = -1
    }

    deinit {
        release()
    }
}
