/// Splits a byte stream into varlink messages: each is a JSON text followed by a NUL.
public struct VarlinkFramer: Sendable {
    /// The longest message accepted, without its NUL.
    public let maximumMessageSize: Int
    private var pending: [UInt8] = []

    public init(maximumMessageSize: Int) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// Whether part of a message has arrived without its end.
    public var hasPartialMessage: Bool { !pending.isEmpty }

    /// Takes newly received bytes; returns the messages they complete, oldest first, without
    /// their NULs. Throws when a message grows past `maximumMessageSize` without ending; the
    /// framer is then of no further use (the connection must close).
    public mutating func append(_ bytes: UnsafeRawBufferPointer) throws(MessageTooLarge) -> [[UInt8]] {
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

    public struct MessageTooLarge: Error, Equatable, Sendable {
        public let limit: Int
    }
}
