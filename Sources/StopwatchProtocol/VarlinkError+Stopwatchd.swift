import Varlink

/// The errors of io.stopwatchd (SPEC §3).
extension VarlinkError {
    package static func invalidName(_ name: String) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.InvalidName", parameters: ["name": .string(name)])
    }
    package static func invalidTransition(_ stopwatch: Stopwatch, method: String) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.InvalidTransition", parameters: ["stopwatch": stopwatch.json, "method": .string(method)])
    }
    package static func tooManyStopwatches(limit: Int) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.TooManyStopwatches", parameters: ["limit": .int(Int64(limit))])
    }
    package static func tooManyLaps(limit: Int) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.TooManyLaps", parameters: ["limit": .int(Int64(limit))])
    }
    package static func tooManyResults(limit: Int) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.TooManyResults", parameters: ["limit": .int(Int64(limit))])
    }
    package static func watchTooSlow(pending: Int) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.WatchTooSlow", parameters: ["pending": .int(Int64(pending))])
    }
    /// Stop, Reset, Lap or Remove of a name that was never created (or was removed).
    package static func noSuchStopwatch(_ name: String) -> VarlinkError {
        VarlinkError(name: noSuchStopwatchName, parameters: ["name": .string(name)])
    }
    package static let noSuchStopwatchName = "io.stopwatchd.NoSuchStopwatch"
    /// An interval id, or a prefix of one, that names none (Amend, Delete).
    package static func noSuchInterval(_ id: String) -> VarlinkError {
        VarlinkError(name: noSuchIntervalName, parameters: ["id": .string(id)])
    }
    package static let noSuchIntervalName = "io.stopwatchd.NoSuchInterval"
    /// A time in the past or an interval that cannot be: `reason` says the allowed range.
    package static func invalidInterval(_ reason: String) -> VarlinkError {
        VarlinkError(name: invalidIntervalName, parameters: ["reason": .string(reason)])
    }
    package static let invalidIntervalName = "io.stopwatchd.InvalidInterval"
    /// Undo with nothing of this device's left to take back.
    package static let nothingToUndo = VarlinkError(name: nothingToUndoName, parameters: [:])
    package static let nothingToUndoName = "io.stopwatchd.NothingToUndo"
    package static func protocolError(_ reason: String) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.ProtocolError", parameters: ["reason": .string(reason)])
    }

    /// How a daemon at its connection limit turns a client away: a `ProtocolError` whose
    /// reason starts with `tooManyConnectionsReason`, which clients treat as "try later".
    package static func tooManyConnections(limit: Int) -> VarlinkError {
        protocolError("\(tooManyConnectionsReason) (limit \(limit)); try again later")
    }
    package static let tooManyConnectionsReason = "too many connections"

    package var isConnectionLimit: Bool {
        guard name == "io.stopwatchd.ProtocolError", case .string(let reason)? = parameters["reason"] else { return false }
        return reason.hasPrefix(Self.tooManyConnectionsReason)
    }
}
