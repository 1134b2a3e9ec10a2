import Varlink

extension VarlinkCall {
    /// `io.stopwatchd.<method>` on stopwatch `name`.
    static func stopwatchd(_ method: String, name: String, more: Bool = false) -> VarlinkCall {
        VarlinkCall(method: "io.stopwatchd.\(method)", parameters: ["name": .string(name)], more: more)
    }

    /// The call as it goes on the wire: JSON and its NUL.
    var message: [UInt8] {
        var bytes = json.serialized
        bytes.append(0)
        return bytes
    }
}
