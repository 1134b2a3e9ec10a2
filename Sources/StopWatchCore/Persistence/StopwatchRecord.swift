/// How one stopwatch is kept on disk (format 1):
///
///     {"format":1,"name":"tea","state":"counting","elapsed_ns":5000000000,"laps_ns":[],
///      "boot_id":"…","origin_boot_ns":…,"origin_wall_ns":…}
///
/// `elapsed_ns` is what it had counted when written. A counting one also keeps where its
/// count began, on the boot clock and on the wall clock, and which boot that was.
public struct StopwatchRecord: Equatable, Sendable {
    public static let format: Int64 = 1

    public enum State: String, Sendable {
        case stopped, counting, pause
    }

    public var name: String
    public var state: State
    public var elapsed: Duration
    public var laps: [Duration]
    /// While counting: the origin on each clock, and the boot they belong to.
    public var originBoot: Duration?
    public var originWall: Duration?
    public var bootID: String?

    /// The record of `snapshot` at `now`.
    public init(name: String, snapshot: StopWatchSnapshot, at now: ClockReading) {
        self.name = name
        self.laps = snapshot.laps
        self.elapsed = snapshot.elapsed(at: now.boot)
        switch snapshot.state {
        case .stopped: state = .stopped
        case .pause: state = .pause
        case .counting: state = .counting
        }
        if let origin = snapshot.origin {
            originBoot = origin
            originWall = now.wall - (now.boot - origin)
            bootID = now.bootID
        }
    }

    /// The stopwatch as it is at `now`. Counting on: exactly, from the boot clock, in the
    /// same boot; from the wall clock after a reboot, where a clock set back never takes away
    /// what was already counted.
    public func snapshot(restoredAt now: ClockReading) -> StopWatchSnapshot {
        switch state {
        case .stopped:
            return .stopped
        case .pause:
            return .paused(at: elapsed, laps: laps)
        case .counting:
            let counted: Duration
            if bootID == now.bootID, let originBoot {
                counted = max(now.boot - originBoot, elapsed)
            } else if let originWall {
                counted = max(now.wall - originWall, elapsed)
            } else {
                counted = elapsed
            }
            return .counting(since: now.boot - counted, laps: laps, now: now.boot)
        }
    }

    public var json: JSONValue {
        var object: JSONObject = [
            "format": .int(Self.format),
            "name": .string(name),
            "state": .string(state.rawValue),
            "elapsed_ns": .int(elapsed.nanoseconds),
            "laps_ns": .array(laps.map { .int($0.nanoseconds) }),
        ]
        if let bootID, let originBoot, let originWall {
            object["boot_id"] = .string(bootID)
            object["origin_boot_ns"] = .int(originBoot.nanoseconds)
            object["origin_wall_ns"] = .int(originWall.nanoseconds)
        }
        return .object(object)
    }

    public init(json: JSONValue) throws(MalformedMessage) {
        guard case .object(let object) = json else { throw MalformedMessage("not a JSON object") }
        guard case .int(let format)? = object["format"] else { throw MalformedMessage("no format version") }
        guard format == Self.format else {
            throw MalformedMessage("format \(format), but this stopwatchd reads format \(Self.format)")
        }
        guard case .string(let name)? = object["name"], StopwatchName.isValid(name) else {
            throw MalformedMessage("no valid name")
        }
        guard case .string(let stateName)? = object["state"], let state = State(rawValue: stateName) else {
            throw MalformedMessage("no valid state")
        }
        guard case .int(let elapsed)? = object["elapsed_ns"], elapsed >= 0 else { throw MalformedMessage("no valid elapsed_ns") }
        guard case .array(let lapValues)? = object["laps_ns"] else { throw MalformedMessage("no laps_ns") }
        var laps: [Duration] = []
        for value in lapValues {
            guard case .int(let lap) = value, lap >= 0 else { throw MalformedMessage("a lap that is not a duration") }
            laps.append(.nanoseconds(lap))
        }
        self.name = name
        self.state = state
        self.elapsed = .nanoseconds(elapsed)
        self.laps = laps
        if state == .counting {
            guard case .string(let bootID)? = object["boot_id"], case .int(let originBoot)? = object["origin_boot_ns"],
                case .int(let originWall)? = object["origin_wall_ns"]
            else { throw MalformedMessage("a counting stopwatch without its origin") }
            self.bootID = bootID
            self.originBoot = .nanoseconds(originBoot)
            self.originWall = .nanoseconds(originWall)
        }
    }
}
