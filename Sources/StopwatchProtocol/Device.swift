import Varlink

/// A device whose history the daemon reads, as `Devices` replies carry it (SPEC §3): the
/// daemon's own, or another whose folder a sync tool brought into the history folder.
public struct Device: Equatable, Sendable {
    /// 32 lowercase hex digits: the device's folder in the history folder.
    public var id: String
    /// From its `device.json`; its id when that is missing or damaged.
    public var name: String
    /// Whether it is the daemon's own device.
    public var this: Bool
    /// The intervals that arrived from it: the lines of intervals that ended and the `track`
    /// records in its months (corrections not applied: an amended interval counts once, a
    /// deleted one still counts).
    public var intervals: Int64
    /// The end of its latest interval (epoch ms); nil when it has none.
    public var lastEndMs: Int64?
    /// When its folder last changed (its months' and `open.json`'s latest modification,
    /// epoch ms); nil when it holds none of them.
    public var changedMs: Int64?

    public init(id: String, name: String, this: Bool, intervals: Int64, lastEndMs: Int64? = nil, changedMs: Int64? = nil) {
        self.id = id
        self.name = name
        self.this = this
        self.intervals = intervals
        self.lastEndMs = lastEndMs
        self.changedMs = changedMs
    }

    package var json: JSONValue {
        var object: JSONObject = [
            "id": .string(id),
            "name": .string(name),
            "this": .bool(this),
            "intervals": .int(intervals),
        ]
        if let lastEndMs { object["last_end_ms"] = .int(lastEndMs) }
        if let changedMs { object["changed_ms"] = .int(changedMs) }
        return .object(object)
    }

    /// Reads a `Device` object; throws when a field is missing or of the wrong type. A time
    /// out of range (a file's modification time comes from whoever set it) is read as none:
    /// it is only shown, and one device's odd file must not make every reply unreadable.
    package init(json: JSONValue) throws(MalformedMessage) {
        guard case .object(let object) = json else { throw MalformedMessage("a Device is not an object") }
        guard case .string(let id)? = object["id"] else { throw MalformedMessage("Device.id is not a string") }
        guard case .string(let name)? = object["name"] else { throw MalformedMessage("Device.name is not a string") }
        guard case .bool(let this)? = object["this"] else { throw MalformedMessage("Device.this is not a bool") }
        guard case .int(let intervals)? = object["intervals"], intervals >= 0 else {
            throw MalformedMessage("Device.intervals is not a count")
        }
        func time(_ key: String) throws(MalformedMessage) -> Int64? {
            switch object[key] {
            case nil, .null?: return nil
            case .int(let value)?: return (0...Interval.latestMs).contains(value) ? value : nil
            default: throw MalformedMessage("Device.\(key) is not a time in milliseconds")
            }
        }
        self.init(
            id: id, name: name, this: this, intervals: intervals, lastEndMs: try time("last_end_ms"), changedMs: try time("changed_ms")
        )
    }
}
