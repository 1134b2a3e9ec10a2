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
}
