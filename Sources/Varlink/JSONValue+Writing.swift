extension JSONValue {
    /// Compact JSON text in UTF-8: no spaces, non-ASCII characters as they are, control
    /// characters escaped.
    package var serialized: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        write(into: &bytes)
        return bytes
    }

    /// The same as `serialized`, as a `String`.
    package var text: String {
        String(decoding: serialized, as: UTF8.self)
    }

    package func write(into bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): Self.writeInteger(value, into: &bytes)
        case .double(let value):
            // JSON has no NaN or infinity; the parser never makes them, so only code could.
            precondition(value.isFinite, "JSON cannot represent \(value)")
            bytes.append(contentsOf: value.description.utf8)
        case .string(let value): Self.writeString(value, into: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// `value` in decimal, as `String(value)` spells it, without making a `String`: a Lap's
    /// reply and state file hold one integer per lap, and for 10,000 laps making a string of
    /// each was a third of the daemon's instructions (docs/PERFORMANCE.md, "Laps").
    package static func writeInteger(_ value: Int64, into bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // The magnitude: Int64.min has none as an Int64. Its digits are made from the last,
        // on the stack, then appended at once.
        var rest = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var index = digits.endIndex
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[index...]))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    package static func writeString(_ string: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): bytes.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): bytes.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): bytes.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F:
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
