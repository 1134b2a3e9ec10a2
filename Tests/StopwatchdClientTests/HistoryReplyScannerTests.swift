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
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"pomo","start_ms":1,"end_ms":2,"elapsed_ms":1,"phase":"focus","device":"desk"},{"id":"fedcba9876543210","name":"pomo","start_ms":5,"elapsed_ms":1,"note":"n","phase":"long break ☕","device":"desk"}]}}"#,
        #"{"parameters":{"intervals":[{"phase":"focus","device":"laptop","elapsed_ms":1,"end_ms":2,"start_ms":1,"name":"pomo","id":"0123456789abcdef"}]}}"#,
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
        #"{"parameters":{"intervals":[{"name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"mood":"focus"}]}}"#,
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

    /// What `scanTimes` gives for what `scan` gives: the times, names through `names`.
    func times(_ intervals: [Interval], _ names: inout NameTable) -> [IntervalTimes] {
        intervals.map { IntervalTimes(nameNumber: names.number(of: $0.name), startMs: $0.startMs, endMs: $0.endMs, elapsedMs: $0.elapsedMs) }
    }

    @Test("times only: the same names and times as the full read, for the daemon's order and any other", arguments: [
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"note":"why ✓","device":"desk"},{"id":"fedcba9876543210","name":"café","start_ms":3,"elapsed_ms":1,"device":"desk"},{"id":"0123456789abcdee","name":"tea","start_ms":3,"end_ms":9,"elapsed_ms":6,"device":"laptop"}]},"continues":true}"#,
        #"{"parameters":{"intervals":[{"device":"laptop","note":"x","elapsed_ms":1,"end_ms":2,"start_ms":1,"name":"tea","id":"0123456789abcdef"},{"name":"tea","start_ms":1000,"end_ms":2000,"elapsed_ms":1000}]}}"#,
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"a b","start_ms":253402300799999,"end_ms":253402300799999,"elapsed_ms":253402300799999,"device":""}]}}"#,
        #"{"parameters":{"intervals":[]}}"#,
    ])
    func timesOnly(text: String) throws {
        let full = try #require(HistoryReplyScanner.scan(Array(text.utf8)))
        var names = NameTable()
        let scanned = try #require(HistoryReplyScanner.scanTimes(Array(text.utf8), names: &names))
        var expectedNames = NameTable()
        #expect(scanned.times == times(full.intervals, &expectedNames))
        #expect(names.names == expectedNames.names)
        #expect(scanned.continues == full.continues)
    }

    @Test("times only: the daemon's order is read by the plain path; any other order is left to the general read, nothing consumed")
    func plainTimesPath() throws {
        let daemonOrder = #"{"id":"0123456789abcdef","name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"note":"n","device":"desk"}"#
        let open = #"{"id":"0123456789abcdef","name":"tea","start_ms":1,"elapsed_ms":1,"device":"desk"}"#
        let otherOrder = #"{"name":"tea","id":"0123456789abcdef","start_ms":1,"end_ms":2,"elapsed_ms":1,"device":"desk"}"#
        let noDevice = #"{"id":"0123456789abcdef","name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1}"#
        let phased = #"{"id":"0123456789abcdef","name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"note":"n","phase":"focus","device":"desk"}"#
        for (text, plain) in [(daemonOrder, true), (open, true), (phased, true), (otherOrder, false), (noDevice, false)] {
            let bytes = Array(text.utf8)
            var names = NameTable()
            let read = bytes.withUnsafeBytes { raw in
                var scanner = HistoryReplyScanner.Scanner(bytes: raw)
                return (scanner.plainTimes(names: &names), scanner.index)
            }
            if plain {
                #expect(read.0 == IntervalTimes(nameNumber: 0, startMs: 1, endMs: text == open ? nil : 2, elapsedMs: 1), "\(text)")
                #expect(read.1 == bytes.count)
            } else {
                #expect(read.0 == nil, "\(text)")
                #expect(read.1 == 0)
            }
        }
    }

    @Test("times only: whatever the full read refuses is left to it, bad UTF-8 in id, note or device too", arguments: [
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"tea","start_ms":01,"end_ms":2,"elapsed_ms":1,"device":"d"}]}}"#,
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"tea","start_ms":5,"end_ms":2,"elapsed_ms":1,"device":"d"}]}}"#,
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"tea","start_ms":1,"end_ms":253402300800000,"elapsed_ms":1,"device":"d"}]}}"#,
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1234567890123456789,"device":"d"}]}}"#,
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1e3,"device":"d"}]}}"#,
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"t\"ea","start_ms":1,"end_ms":2,"elapsed_ms":1,"device":"d"}]}}"#,
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"device":"d","mood":"focus"}]}}"#,
        #"{"parameters":{"intervals":[{"id":"0123456789abcdef","name":"tea","start_ms":1,"end_ms":2,"elapsed_ms":1,"device":"d"}],"continues":false}"#,
    ])
    func timesOnlyOther(text: String) {
        var names = NameTable()
        #expect(HistoryReplyScanner.scanTimes(Array(text.utf8), names: &names) == nil)
        #expect(HistoryReplyScanner.scan(Array(text.utf8)) == nil)
    }

    @Test("times only: a field that is not UTF-8 is left to the full path, in the daemon's order or not")
    func timesOnlyInvalidUTF8() {
        for field in ["note", "device", "id", "name"] {
            for daemonOrder in [true, false] {
                var bytes = Array(#"{"parameters":{"intervals":[{"#.utf8)
                func add(_ key: String, _ value: [UInt8]) {
                    if bytes.last != UInt8(ascii: "{") { bytes.append(UInt8(ascii: ",")) }
                    bytes += Array("\"\(key)\":".utf8) + value
                }
                func string(_ key: String, _ text: String) -> [UInt8] {
                    Array("\"".utf8) + Array(text.utf8) + (key == field ? [0xFF] : []) + Array("\"".utf8)
                }
                let fields: [(String, [UInt8])] = [
                    ("id", string("id", "0123456789abcdef")), ("name", string("name", "tea")), ("start_ms", Array("1".utf8)),
                    ("end_ms", Array("2".utf8)), ("elapsed_ms", Array("1".utf8)), ("note", string("note", "n")), ("device", string("device", "desk")),
                ]
                for (key, value) in daemonOrder ? fields : fields.reversed() { add(key, value) }
                bytes += Array("}]}}".utf8)
                var names = NameTable()
                #expect(HistoryReplyScanner.scanTimes(bytes, names: &names) == nil, "\(field), daemon's order: \(daemonOrder)")
                #expect(HistoryReplyScanner.scan(bytes) == nil, "\(field)")
            }
        }
    }

    @Test("a name that is not UTF-8 is left to the full path")
    func invalidUTF8() {
        let bytes = Array(#"{"parameters":{"intervals":[{"name":""#.utf8) + [0xFF] + Array(#"","start_ms":1,"end_ms":2,"elapsed_ms":1}]}}"#.utf8)
        #expect(HistoryReplyScanner.scan(bytes) == nil)
    }
}
