/// An error a varlink method answers with: a qualified name and its parameters.
public struct VarlinkError: Error, Equatable, Sendable, CustomStringConvertible {
    public let name: String
    public let parameters: JSONObject

    public init(name: String, parameters: JSONObject = [:]) {
        self.name = name
        self.parameters = parameters
    }

    public var description: String {
        parameters.isEmpty ? name : "\(name) \(JSONValue.object(parameters).text)"
    }

    // org.varlink.service
    public static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InterfaceNotFound", parameters: ["interface": .string(interface)])
    }
    public static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.MethodNotFound", parameters: ["method": .string(method)])
    }
    public static func invalidParameter(_ parameter: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InvalidParameter", parameters: ["parameter": .string(parameter)])
    }
    public static let permissionDenied = VarlinkError(name: "org.varlink.service.PermissionDenied")
    public static let expectedMore = VarlinkError(name: "org.varlink.service.ExpectedMore")

    // io.stopwatchd
    public static func invalidName(_ name: String) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.InvalidName", parameters: ["name": .string(name)])
    }
    public static func invalidTransition(_ stopwatch: Stopwatch, method: String) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.InvalidTransition", parameters: ["stopwatch": stopwatch.json, "method": .string(method)])
    }
    public static func tooManyStopwatches(limit: Int) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.TooManyStopwatches", parameters: ["limit": .int(Int64(limit))])
    }
    public static func tooManyLaps(limit: Int) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.TooManyLaps", parameters: ["limit": .int(Int64(limit))])
    }
    public static func watchTooSlow(pending: Int) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.WatchTooSlow", parameters: ["pending": .int(Int64(pending))])
    }
    public static func protocolError(_ reason: String) -> VarlinkError {
        VarlinkError(name: "io.stopwatchd.ProtocolError", parameters: ["reason": .string(reason)])
    }

    /// How a daemon at its connection limit turns a client away: a `ProtocolError` whose
    /// reason starts with `tooManyConnectionsReason`, which clients treat as "try later".
    public static func tooManyConnections(limit: Int) -> VarlinkError {
        protocolError("\(tooManyConnectionsReason) (limit \(limit)); try again later")
    }
    public static let tooManyConnectionsReason = "too many connections"

    public var isConnectionLimit: Bool {
        guard name == "io.stopwatchd.ProtocolError", case .string(let reason)? = parameters["reason"] else { return false }
        return reason.hasPrefix(Self.tooManyConnectionsReason)
    }
}
