import Varlink

/// One `Watch` reply: the stopwatch, and why it was sent. Hooks get the same object on
/// their standard input.
public struct WatchUpdate: Equatable, Sendable {
    public var stopwatch: Stopwatch
    public var event: WatchEvent

    public init(stopwatch: Stopwatch, event: WatchEvent) {
        self.stopwatch = stopwatch
        self.event = event
    }

    /// The reply's parameters: `{"stopwatch": {…}, "event": "tick"}`.
    package var parameters: JSONObject {
        ["stopwatch": stopwatch.json, "event": .string(event.rawValue)]
    }

    package var json: JSONValue { .object(parameters) }

    /// The `Watch` reply as it goes on the wire, its NUL included: the bytes of
    /// `VarlinkReply(parameters: parameters, continues: continues).message`, written straight
    /// from the stopwatch without the trees (issue 30: a tick's reply).
    package func replyMessage(continues: Bool) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160 + 8 * stopwatch.lapsMs.count)
        bytes.append(contentsOf: #"{"parameters":{"stopwatch":"#.utf8)
        stopwatch.writeJSON(into: &bytes)
        bytes.append(contentsOf: #","event":"#.utf8)
        JSONValue.writeString(event.rawValue, into: &bytes)
        bytes.append(UInt8(ascii: "}"))
        if continues { bytes.append(contentsOf: #","continues":true"#.utf8) }
        bytes.append(UInt8(ascii: "}"))
        bytes.append(0)
        return bytes
    }

    /// Reads a `Watch` reply's parameters. A reply without an event (a daemon older than
    /// countdowns) reads as `current`, so such a daemon can still be watched.
    package init(json parameters: JSONObject) throws(MalformedMessage) {
        guard let value = parameters["stopwatch"] else { throw MalformedMessage("a Watch reply without its stopwatch") }
        let stopwatch = try Stopwatch(json: value)
        switch parameters["event"] {
        case nil, .null?:
            self.init(stopwatch: stopwatch, event: .current)
        case .string(let word)?:
            guard let event = WatchEvent(rawValue: word) else { throw MalformedMessage("unknown Watch event '\(word)'") }
            self.init(stopwatch: stopwatch, event: event)
        default:
            throw MalformedMessage("a Watch event that is not a string")
        }
    }
}
