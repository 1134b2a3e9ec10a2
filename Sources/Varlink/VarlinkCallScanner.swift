/// The fields of a plain call, read straight from its bytes: a method and at most a `name`
/// parameter, as a status bar's `Get` sends them.
package struct ScannedCall: Equatable, Sendable {
    /// The fully qualified method, e.g. `io.stopwatchd.Get`.
    package let method: String
    /// The `name` parameter; nil when there is none.
    package let name: String?

    package init(method: String, name: String?) {
        self.method = method
        self.name = name
    }
}

/// Reads a plain call without a parse tree (issue 30: building and freeing the call's tree was
/// much of a `Get`'s own work). It takes only the simplest shape: an object of `"method"` (a
/// string) and, if present, `"parameters"` (an object of at most `"name"`, a string), in
/// either order, JSON whitespace between tokens, each key once, strings without escapes or
/// control characters, valid UTF-8. For anything else (`more`, `oneway`, another key, an
/// escape, a number, a repeated key) it returns nil and the full parser reads the message.
/// What it returns is what `VarlinkCall(message:)` reads from the same bytes: the fuzz run
/// checks that on every input (Fuzz/VarlinkFuzzer.swift).
package enum VarlinkCallScanner {
    package static func scan(_ message: [UInt8]) -> ScannedCall? {
        message.withUnsafeBufferPointer { bytes in
            var scanner = Cursor(bytes: bytes)
            return scanner.call()
        }
    }

    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func call() -> ScannedCall? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var method: String?
            var name: String?
            var sawParameters = false
            repeat {
                guard let key = string() else { return nil }
                guard take(UInt8(ascii: ":")) else { return nil }
                switch key {
                case "method":
                    guard method == nil, let value = string() else { return nil }
                    method = value
                case "parameters":
                    guard !sawParameters, parameters(name: &name) else { return nil }
                    sawParameters = true
                default:
                    return nil
                }
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")), let method else { return nil }
            skipWhitespace()
            guard index == bytes.count else { return nil }
            return ScannedCall(method: method, name: name)
        }

        /// `{}`, or `{"name": "…"}` and `name` set to it; false for anything else.
        mutating func parameters(name: inout String?) -> Bool {
            guard take(UInt8(ascii: "{")) else { return false }
            if take(UInt8(ascii: "}")) { return true }
            guard string() == "name", take(UInt8(ascii: ":")), let value = string(), take(UInt8(ascii: "}")) else { return false }
            name = value
            return true
        }

        /// A string without escapes or control characters, valid UTF-8, after whitespace.
        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                guard byte >= 0x20, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            return nil
        }

        /// Skips whitespace, then takes `byte` if it is next.
        mutating func take(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
                default: return
                }
            }
        }
    }
}
