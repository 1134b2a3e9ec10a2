import Glibc
@testable import LinuxSystem
import Testing

/// Descriptors a parent left open are made close-on-exec at start, by `close_range` or,
/// before Linux 5.11, by listing /proc/self/fd.
/// Serialized: each test's descriptor must not be made close-on-exec by the other's call.
@Suite("inherited descriptors", .serialized)
struct InheritedDescriptorTests {
    /// A descriptor as a parent leaves it: without close-on-exec.
    static func openWithoutCloseOnExec() throws -> CInt {
        let descriptor = open("/dev/null", O_RDONLY)
        try #require(descriptor >= 3)
        try #require(fcntl(descriptor, F_GETFD) & FD_CLOEXEC == 0)
        return descriptor
    }

    @Test("closeInheritedDescriptorsOnExec: every descriptor from 3 on is close-on-exec, and still open")
    func closeRange() throws {
        let descriptor = try Self.openWithoutCloseOnExec()
        defer { close(descriptor) }
        let standardError = fcntl(STDERR_FILENO, F_GETFD)
        CurrentProcess.closeInheritedDescriptorsOnExec()
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(STDERR_FILENO, F_GETFD) == standardError, "0, 1 and 2 are left as they are")
    }

    @Test("before Linux 5.11: each descriptor listed in /proc/self/fd")
    func listedInProc() throws {
        let descriptor = try Self.openWithoutCloseOnExec()
        defer { close(descriptor) }
        let standardError = fcntl(STDERR_FILENO, F_GETFD)
        CurrentProcess.markCloseOnExecListedInProc()
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(STDERR_FILENO, F_GETFD) == standardError, "0, 1 and 2 are left as they are")
    }
}
