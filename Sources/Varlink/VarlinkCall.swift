/// A varlink method call: `{"method": "...", "parameters": {...}, "more": bool, "oneway": bool}`.
package struct VarlinkCall: Equatable, Sendable {
    /// The fully qualified method, e.g. `io.stopwatchd.Start`.
    package var method: String
    package var parameters: JSONObject
    /// The caller wants a stream of replies.
    package var more: Bool
    /// The caller wants no reply at all.
    package var oneway: Bool

    package init(method: String, parameters: JSONObject = [:], more: Bool = false, oneway: Bool = false) {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
    }

    /// The interface part of `method`: everything before the last dot ("" when there is none).
    package var interface: String {
        guard let dot = lastDot else { return "" }
        return String(method[..<dot])
    }

    /// The method's own name: everything after the last dot.
    package var memberName: String {
        guard let dot = lastDot else { return method }
        return String(method[method.utf8.index(after: dot)...])
    }

    /// Found in the UTF-8 bytes, where a dot is one byte and a boundary of characters too:
    /// searching the characters breaks graphemes at each step, a cost every call paid
    /// (docs/PERFORMANCE.md).
    private var lastDot: String.Index? {
        method.utf8.lastIndex(of: UInt8(ascii: "."))
    }

    package var json: JSONValue {
        var object: JSONObject = ["method": .string(method)]
        if !parameters.isEmpty { object["parameters"] = .object(parameters) }
        if more { object["more"] = .bool(true) }
        if oneway { object["oneway"] = .bool(true) }
        return .object(object)
    }

    /// Reads a call from one message (without its NUL).
    package init(message: [UInt8]) throws(MalformedMessage) {
        let json: JSONValue
        do {
            json = try JSONParser.parse(message)
        } catch {
            throw MalformedMessage("not JSON: \(error)")
        }
        try self.init(json: json)
    }

    /// Reads a call. Unknown fields (such as `upgrade`) are ignored, as varlink asks.
    package init(json: JSONValue) throws(MalformedMessage) {
        guard case .object(let object) = json else { throw MalformedMessage("a call must be a JSON object") }
        guard case .string(let method)? = object["method"] else {
            throw MalformedMessage(object["method"] == nil ? "the call has no \"method\"" : "\"method\" must be a string")
        }
        var parameters = JSONObject()
        switch object["parameters"] {
        case nil, .null?: break
        case .object(let given)?: parameters = given
        default: throw MalformedMessage("\"parameters\" must be an object")
        }
        self.init(
            method: method,
            parameters: parameters,
            more: try Self.flag("more", in: object),
            oneway: try Self.flag("oneway", in: object)
        )
    }

    private static func flag(_ key: String, in object: JSONObject) throws(MalformedMessage) -> Bool {
        switch object[key] {
        case nil, .null?: false
        case .bool(let value)?: value
        default: throw MalformedMessage("\"\(key)\" must be true or false")
        }
    }
}
