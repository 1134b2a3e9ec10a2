import Glibc
import LinuxSystem
import Testing

/// `FileDescriptor.boundPath()`: what a socket passed by systemd tells its hooks it serves.
@Suite("bound socket path")
struct BoundPathTests {
    @Test("a socket bound to a path, or to an abstract name, says which; an unbound one has none")
    func boundPath() throws {
        let path = "/tmp/swbound-\(getpid()).sock"
        defer { unlink(path) }
        let bound = try FileDescriptor.unixStreamSocket(nonBlocking: false)
        defer { bound.close() }
        try bound.bind(toPath: path)
        #expect(try bound.boundPath() == path)

        let abstract = try FileDescriptor.unixStreamSocket(nonBlocking: false)
        defer { abstract.close() }
        let name = "@swbound-\(getpid())"
        try abstract.bind(toPath: name)
        #expect(try abstract.boundPath() == name)

        let unbound = try FileDescriptor.unixStreamSocket(nonBlocking: false)
        defer { unbound.close() }
        #expect(try unbound.boundPath() == nil)
    }
}
