import Glibc
import LinuxSystem
import Testing
import Varlink

/// `Memory.releaseCodePages`, which the daemon calls once serving: the read-only segments
/// of the program and its libraries are unmapped, and code and constants come back at
/// their next use, unchanged.
@Suite("memory: releasing the pages of code")
struct CodePagesTests {
    @Test("code and constants work as before after their pages are released")
    func releaseAndRun() throws {
        let before = JSONValue.object(["name": .string("tea"), "laps_ms": .array([.int(1), .int(-2)])]).text
        let released = Memory.releaseCodePages()
        // At least the test binary's own text, whole pages of it.
        #expect(released > 0)
        #expect(released % 4096 == 0)
        // Run again what ran before, and more: the same results, from pages mapped again.
        let after = JSONValue.object(["name": .string("tea"), "laps_ms": .array([.int(1), .int(-2)])]).text
        #expect(after == before)
        #expect(try JSONParser.parse(after).text == before)
        #expect(String(12345).count == 5)
    }

    @Test("a page of a file's mapping is the file's until written; then it is a private copy, never dropped")
    func privateCopiesAreKept() throws {
        let path = "/tmp/stopwatchd-codepages-\(getpid())"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd); unlink(path) }
        let page = [UInt8](repeating: 7, count: 4096)
        #expect(page.withUnsafeBytes { write(fd, $0.baseAddress, 4096) } == 4096)
        let mapping = try #require(mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0))
        try #require(mapping != MAP_FAILED)
        defer { munmap(mapping, 4096) }
        let bytes = mapping.assumingMemoryBound(to: UInt8.self)
        #expect(Memory.pageHoldsFileContents(mapping) == true)  // not mapped yet
        #expect(bytes[0] == 7)
        #expect(Memory.pageHoldsFileContents(mapping) == true)  // mapped from the file
        bytes[0] = 8
        #expect(Memory.pageHoldsFileContents(mapping) == false)  // a private copy
    }
}
