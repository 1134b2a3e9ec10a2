import StopwatchProtocol
@testable import StopwatchdClient
import Testing
import Varlink

/// The fast reader of `History` replies: the same intervals as the full JSON path for the
/// daemon's shape, and nil (the full path decides) for anything else.
@Suite("History reply scanner")
struct HistoryReplyScannerTests {
    /// What the full path reads: the intervals and `continues`, or nil when it refuses.
    func slow(_ text: String) -> (intervals: [Interval], continues: Bool)? {
        guard let json = try? JSONParser.parse(Array(text.utf8)), let reply = try? VarlinkReply(json: json),
            reply.error == nil, case .array(let items)? = reply.parameters["intervals"]
        else { return nil }
        var intervals: [Interval] = []
        for item in items {
            guard let interval = try? Interval(json: item) else { return nil }
            intervals.append(interval)
        }
        return (intervals, reply.continues)
    }

    @Test("the daemon's shape: closed, open, empty, continues or not; the same as the full path", arguments: [
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":1000,"end_ms":2000,"elapsed_ms":1000},{"name":"café ☕","start_ms":3000,"elapsed_ms":5}]},"continues":true}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":0,"end_ms":0,"elapsed_ms":0}]}}"#,
        #"{"parameters":{"intervals":[]}}"#,
        #"{"parameters":{"intervals":[]},"continues":true}"#,
        #"{"parameters":{"intervals":[{"name":"a b","start_ms":253402300799999,"end_ms":253402300799999,"elapsed_ms":253402300799999}]}}"#,
        #"{"parameters":{"intervals":[{"start_ms":1,"name":"tea","end_ms":2,"elapsed_ms":1}]}}"#,
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"note":"fix the parser ✓","device":"desk"},{"id":"fedcba9876543210","name":"tea","start_ms":5,"elapsed_ms":1,"note":"n","device":"desk"}]}}"#,
        #"{"parameters":{"intervals":[{"device":"laptop","note":"x","elapsed_ms":1,"end_ms":2,"start_ms":1,"name":"tea","id":"0123456789abcdef"}]}}"#,
    ])
    func plain(text: String) throws {
        let fast = try #require(HistoryReplyScanner.scan(Array(text.utf8)))
        let full = try #require(slow(text))
        #expect(fast.intervals == full.intervals)
        #expect(fast.continues == full.continues)
    }

    @Test("anything else is left to the full path", arguments: [
        #"{"error":"io.stopwatchd.TooManyResults","parameters":{"limit":10000}}"#,
        #"{"parameters":{"intervals":[{"name":"t\"ea","start_ms":1,"end_ms":2,"elapsed_ms":1}]}}"#,
        #"{"parameters": {"intervals":[]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1}]}}"#,
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","start_ms":1,"end_ms":2,"elapsed_ms":1}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"note":"a\nb"}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"note":null}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"phase":"focus"}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"device":7}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":1.0,"end_ms":2,"elapsed_ms":1}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":01,"end_ms":2,"elapsed_ms":1}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":1e3,"end_ms":2000,"elapsed_ms":1}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":-1,"end_ms":2,"elapsed_ms":1}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":5,"end_ms":2,"elapsed_ms":1}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":1,"end_ms":253402300800000,"elapsed_ms":1}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":99999999999999999999,"end_ms":2,"elapsed_ms":1}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"x":1}]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1},]}}"#,
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1}]},"continues":false}"#,
        #"{"parameters":{"intervals":[]}} "#,
        #"{"parameters":{"intervals":["#,
    ])
    func other(text: String) {
        #expect(HistoryReplyScanner.scan(Array(text.utf8)) == nil)
    }

    @Test("id, note and device are read, not dropped")
    func newFields() throws {
        let text = #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"note":"why","device":"desk"}]}}"#
        let fast = try #require(HistoryReplyScanner.scan(Array(text.utf8)))
        #expect(fast.intervals == [Interval(id: "0123456789abcdef", name: "tea", startMs: 1, endMs: 2, elapsedMs: 1, note: "why", device: "desk")])
    }

    @Test("without details: the same names and times, no id, note or device; bad UTF-8 in them still left to the full path")
    func withoutDetails() throws {
        let text = #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"note":"why ✓","device":"desk"},{"id":"fedcba9876543210","name":"café","start_ms":3,"elapsed_ms":1,"device":"desk"}]}}"#
        let full = try #require(HistoryReplyScanner.scan(Array(text.utf8)))
        let bare = try #require(HistoryReplyScanner.scan(Array(text.utf8), details: false))
        #expect(full.intervals.map(\.device) == ["desk", "desk"])
        #expect(bare.intervals == full.intervals.map { Interval(name: $0.name, startMs: $0.startMs, endMs: $0.endMs, elapsedMs: $0.elapsedMs) })
        for field in ["note", "device", "id"] {
            let bytes = Array(#"{"parameters":{"intervals":[{"name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,""#.utf8) + Array(field.utf8)
                + Array(#"":"a"#.utf8) + [0xFF] + Array(#""}]}}"#.utf8)
            #expect(HistoryReplyScanner.scan(bytes, details: false) == nil, "\(field)")
            #expect(HistoryReplyScanner.scan(bytes) == nil, "\(field)")
        }
    }

    @Test("a name that is not UTF-8 is left to the full path")
    func invalidUTF8() {
        let bytes = Array(#"{"parameters":{"intervals":[{"name":""#.utf8) + [0xFF] + Array(#"","start_ms":1,"end_ms":2,"elapsed_ms":1}]}}"#.utf8)
        #expect(HistoryReplyScanner.scan(bytes) == nil)
    }
}
