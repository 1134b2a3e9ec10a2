/// A message that is not what the protocol says it must be: not JSON, not an object, a
/// field missing or of the wrong type.
public struct MalformedMessage: Error, Equatable, Sendable, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
