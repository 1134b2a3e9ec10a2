import StopwatchProtocol
import Testing
import Varlink

/// A stopwatch written without a tree (a plain Get's reply) is byte for byte what the tree
/// serializes, in every state and with every optional field.
@Suite("stopwatch written without a tree")
struct StopwatchWritingTests {
    static let cycle = Stopwatch.Cycle(
        phases: [.init(label: "focus", targetMs: 1_500_000), .init(label: "break \"short\"", targetMs: 300_000)], phase: 1, round: 2,
        rounds: 4, auto: false
    )

    static let stopwatches: [Stopwatch] = [
        Stopwatch(name: "default", state: .stopped, elapsedMs: 0),
        Stopwatch(name: "work", state: .counting, elapsedMs: 1_234_567, lapsMs: [1, 20, 300, Int64.max]),
        Stopwatch(name: "tea", state: .pause, elapsedMs: -5, targetMs: 180_000, countsSleep: false),
        Stopwatch(name: "zeit für 🍅", state: .counting, elapsedMs: Int64.min, note: "a \"quoted\"\\ note\twith\u{7F} and \u{1}"),
        Stopwatch(name: "pomodoro", state: .counting, elapsedMs: 42, targetMs: 300_000, cycle: cycle),
        Stopwatch(name: "endless", state: .counting, elapsedMs: 42, cycle: .init(phases: [.init(label: "a", targetMs: 1)])),
    ]

    @Test("json.serialized and writeJSON agree", arguments: stopwatches)
    func writtenAsTheTreeSerializes(_ stopwatch: Stopwatch) {
        var direct: [UInt8] = []
        stopwatch.writeJSON(into: &direct)
        #expect(direct == stopwatch.json.serialized, "\(String(decoding: direct, as: UTF8.self)) against \(stopwatch.json.text)")
        #expect(stopwatch.getReplyMessage == VarlinkReply(parameters: ["stopwatch": stopwatch.json]).message)
    }

    @Test("a Watch reply, with and without continues, for every event", arguments: WatchEvent.allCases)
    func watchReplies(_ event: WatchEvent) {
        for stopwatch in Self.stopwatches {
            let update = WatchUpdate(stopwatch: stopwatch, event: event)
            for continues in [true, false] {
                #expect(update.replyMessage(continues: continues) == VarlinkReply(parameters: update.parameters, continues: continues).message)
            }
        }
    }

    @Test func listReplies() {
        for count in [0, 1, Self.stopwatches.count] {
            let listed = Array(Self.stopwatches.prefix(count))
            #expect(Stopwatch.listReplyMessage(listed) == VarlinkReply(parameters: ["stopwatches": .array(listed.map(\.json))]).message)
        }
    }
}
