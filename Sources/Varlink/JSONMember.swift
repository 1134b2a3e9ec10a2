/// One member of a `JSONObject`: a key and its value.
package struct JSONMember: Equatable, Sendable {
    package var key: String
    package var value: JSONValue

    package init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}
