/// A JSON value, as varlink messages carry them. Objects keep their keys in order, so what
/// the daemon writes is stable and readable.
package enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// An integral number that fits in 64 bits.
    case int(Int64)
    /// Any other finite number.
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON object: keys in order, each once.
package struct JSONObject: Equatable, Sendable, ExpressibleByDictionaryLiteral {
    /// Members, not tuples: an array of tuples is destroyed through the tuple's metadata,
    /// member by member, a cost every reply paid (docs/PERFORMANCE.md).
    package private(set) var members: [JSONMember]

    package init(_ members: [JSONMember] = []) {
        self.members = members
    }

    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.members = elements.map { JSONMember(key: $0.0, value: $0.1) }
    }

    /// The value of `key`, or nil when absent. Setting nil removes the key.
    package subscript(key: String) -> JSONValue? {
        get { members.first { $0.key == key }?.value }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append(JSONMember(key: key, value: newValue))
            }
        }
    }

    package var keys: [String] { members.map(\.key) }
    package var isEmpty: Bool { members.isEmpty }

    package static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

/// One member of a `JSONObject`: a key and its value.
package struct JSONMember: Equatable, Sendable {
    package var key: String
    package var value: JSONValue

    package init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}
