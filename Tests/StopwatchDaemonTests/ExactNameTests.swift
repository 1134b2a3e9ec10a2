import StopWatchCore
@testable import StopwatchDaemon
import StopwatchProtocol
import Testing
import Varlink

/// Names are compared as given (SPEC §3): two spellings of "café" that Swift's `String`
/// holds equal are two stopwatches everywhere the daemon keeps them by name.
@Suite("names compared as given")
struct ExactNameTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    @Test("NFC and NFD are two stopwatches: created, saved, listed in byte order, timed apart")
    func twoStopwatches() throws {
        let fixture = StopwatchServiceFixture()
        #expect(Self.nfc == Self.nfd)  // what String says, which the daemon must not
        _ = fixture.stopwatch("Start", Self.nfc)
        _ = fixture.stopwatch("Start", Self.nfd)
        let paused = try #require(fixture.stopwatch("Stop", Self.nfd))
        #expect(paused.state == .pause)
        #expect(fixture.registry.createdCount == 2)
        #expect(fixture.registry.created(Self.nfc)?.state.current.state.isCounting == true)
        #expect(fixture.saves.map { Array($0.name.utf8) } == [Self.nfc, Self.nfd, Self.nfd].map { Array($0.utf8) })

        let listed = try #require(fixture.reply("List")?["stopwatches"])
        guard case .array(let items) = listed else {
            Issue.record("List gave \(listed)")
            return
        }
        let names = items.compactMap { try? Stopwatch(json: $0).name }
        // By bytes: "cafe" + U+0301 (65 CC 81) sorts before "caf" + U+00E9 (C3 A9).
        #expect(names.map { Array($0.utf8) } == [Array(Self.nfd.utf8), Array(Self.nfc.utf8)])

        _ = fixture.call("Countdown", ["name": .string(Self.nfc), "target_ms": .int(60_000)])
        _ = fixture.call("Countdown", ["name": .string(Self.nfd), "target_ms": .int(90_000)])
        #expect(fixture.stopwatches.expiries.count == 2)
        _ = fixture.call("Remove", ["name": .string(Self.nfd)])
        #expect(fixture.stopwatches.expiries.count == 1)
        #expect(fixture.registry.created(Self.nfc) != nil)
        #expect(fixture.registry.created(Self.nfd) == nil)
    }

    @Test("List is sorted by UTF-8 bytes: code point order, not String's")
    func listOrder() throws {
        let fixture = StopwatchServiceFixture()
        let names = ["b", "B", "a b", "a", "é", "タイマー", "😀", "Z", "-x", "a.b"]
        for name in names { _ = fixture.stopwatch("Start", name) }
        let listed = fixture.registry.createdStopwatches.map(\.name)
        let expected = names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(listed == expected)
        #expect(listed.first == "-x")
        #expect(listed.last == "😀")
    }
}
