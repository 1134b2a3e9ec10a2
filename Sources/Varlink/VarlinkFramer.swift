/// Splits a byte stream into varlink messages: each is a JSON text followed by a NUL.
package struct VarlinkFramer: Sendable {
    /// The longest message accepted, without its NUL.
    package let maximumMessageSize: Int
    private var pending: [UInt8] = []

    package init(maximumMessageSize: Int) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// Whether part of a message has arrived without its end.
    package var hasPartialMessage: Bool { !pending.isEmpty }

    /// Takes newly received bytes; returns the messages they complete, oldest first, without
    /// their NULs. Throws when a message grows past `maximumMessageSize` without ending; the
    /// framer is then of no further use (the connection must close).
    package mutating func append(_ bytes: UnsafeRawBufferPointer) throws(MessageTooLarge) -> [[UInt8]] {
        var messages: [[UInt8]] = []
        var rest = bytes[...]
        while let end = rest.firstIndex(of: 0) {
            let part = rest[..<end]
            guard pending.count + part.count <= maximumMessageSize else { throw MessageTooLarge(limit: maximumMessageSize) }
            if pending.isEmpty {
                messages.append(Array(part))
            } else {
                pending.append(contentsOf: part)
                messages.append(pending)
                pending.removeAll(keepingCapacity: false)
            }
            rest = rest[(end + 1)...]
        }
        guard pending.count + rest.count <= maximumMessageSize else { throw MessageTooLarge(limit: maximumMessageSize) }
        pending.append(contentsOf: rest)
        return messages
    }

    package struct MessageTooLarge: Error, Equatable, Sendable {
        package let limit: Int
    }
}
