/// A varlink reply: parameters, perhaps `"continues": true`, or an error with its parameters.
package struct VarlinkReply: Equatable, Sendable {
    package var parameters: JSONObject
    /// More replies to the same call follow.
    package var continues: Bool
    /// The qualified error name, e.g. `io.stopwatchd.InvalidName`; nil for a success.
    package var error: String?

    package init(parameters: JSONObject = [:], continues: Bool = false, error: String? = nil) {
        self.parameters = parameters
        self.continues = continues
        self.error = error
    }

    package init(_ error: VarlinkError) {
        self.init(parameters: error.parameters, error: error.name)
    }

    package var json: JSONValue {
        var object = JSONObject()
        if let error { object["error"] = .string(error) }
        object["parameters"] = .object(parameters)
        if continues { object["continues"] = .bool(true) }
        return .object(object)
    }

    /// The reply as it goes on the wire: its JSON text and the terminating NUL.
    package var message: [UInt8] {
        var bytes = json.serialized
        bytes.append(0)
        return bytes
    }

    package init(json: JSONValue) throws(MalformedMessage) {
        guard case .object(let object) = json else { throw MalformedMessage("a reply must be a JSON object") }
        var parameters = JSONObject()
        switch object["parameters"] {
        case nil, .null?: break
        case .object(let given)?: parameters = given
        default: throw MalformedMessage("\"parameters\" must be an object")
        }
        var error: String?
        switch object["error"] {
        case nil, .null?: break
        case .string(let name)?: error = name
        default: throw MalformedMessage("\"error\" must be a string")
        }
        var continues = false
        switch object["continues"] {
        case nil, .null?: break
        case .bool(let value)?: continues = value
        default: throw MalformedMessage("\"continues\" must be true or false")
        }
        self.init(parameters: parameters, continues: continues, error: error)
    }
}
