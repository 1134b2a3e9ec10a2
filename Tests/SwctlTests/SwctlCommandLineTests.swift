import StopwatchProtocol
import Testing
@testable import swctl

@Suite("swctl command lines")
struct SwctlCommandLineTests {
    @Test("swctl command lines")
    func swctl() throws {
        #expect(try SwctlInvocation.parse(["start"]) == .run(SwctlInvocation(.start(name: nil))))
        let watch = SwctlInvocation(.watch(name: "tea", format: .waybar), socket: .user)
        #expect(try SwctlInvocation.parse(["--user", "watch", "tea", "--format=waybar"]) == .run(watch))
        let json = SwctlInvocation(.status(name: nil), socket: .path("/s"), json: true)
        #expect(try SwctlInvocation.parse(["status", "--json", "--socket", "/s"]) == .run(json))
        #expect(throws: UsageError.self) { try SwctlInvocation.parse(["remove"]) }
        #expect(throws: UsageError.self) { try SwctlInvocation.parse(["--system", "--user", "list"]) }
    }
}
