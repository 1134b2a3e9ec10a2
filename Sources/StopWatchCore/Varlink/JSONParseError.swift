/// Why `JSONParser` refused its input, and where.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Short human text, such as `nesting deeper than 64 levels` or `duplicate key "name"`.
    public let reason: String
    /// The byte offset in the input where it went wrong.
    public let offset: Int

    init(_ reason: String, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "\(reason) at byte \(offset)" }
}
