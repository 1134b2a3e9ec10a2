/// A message that is not what the protocol says it must be: not JSON, not an object, a
/// field missing or of the wrong type.
package struct MalformedMessage: Error, Equatable, Sendable, CustomStringConvertible {
    package let reason: String

    package init(_ reason: String) {
        self.reason = reason
    }

    package var description: String { reason }
}
