/// Why `JSONParser` refused its input, and where.
package struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Short human text, such as `nesting deeper than 64 levels` or `duplicate key "name"`.
    package let reason: String
    /// The byte offset in the input where it went wrong.
    package let offset: Int

    package init(_ reason: String, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    package var description: String { "\(reason) at byte \(offset)" }
}
