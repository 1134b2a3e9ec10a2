import Glibc

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
        guard let base = bytes.baseAddress else { return [] }
        var messages: [[UInt8]] = []
        var start = 0
        // memchr, not `firstIndex(of:)`: a history reply is thousands of messages per read,
        // and a Swift loop compares one byte per iteration where memchr compares many.
        while start < bytes.count, let found = memchr(base + start, 0, bytes.count - start) {
            let end = UnsafeRawPointer(found) - base
            let part = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            guard pending.count + part.count <= maximumMessageSize else { throw MessageTooLarge(limit: maximumMessageSize) }
            if pending.isEmpty {
                messages.append(Array(part))
            } else {
                pending.append(contentsOf: part)
                messages.append(pending)
                pending.removeAll(keepingCapacity: false)
            }
            start = end + 1
        }
        let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
        guard pending.count + rest.count <= maximumMessageSize else { throw MessageTooLarge(limit: maximumMessageSize) }
        pending.append(contentsOf: rest)
        return messages
    }

    package struct MessageTooLarge: Error, Equatable, Sendable {
        package let limit: Int
    }
}
