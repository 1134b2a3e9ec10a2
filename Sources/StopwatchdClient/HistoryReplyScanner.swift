import StopwatchProtocol

/// Reads a `History` reply of the compact shape the daemon writes,
/// `{"parameters":{"intervals":[{"id":…,"name":…,"start_ms":…,"end_ms":…,"elapsed_ms":…,"note":…,"device":…},…]}`
/// and `,"continues":true` before the last `}` (an interval's keys in any order, no
/// spaces), in one pass over its bytes, without a JSON tree:
/// `swctl report` over a million intervals spent most of its time building and reading
/// ten thousand dictionaries per reply.
///
/// Anything else (an error reply, other spacing or keys, an escape in a string, a number that
/// is not a plain integer) gives nil, and the caller reads the reply with the full
/// `JSONParser`: the same intervals, or the same error, as before.
enum HistoryReplyScanner {
    /// The intervals and whether more replies follow, or nil when the reply is not of the
    /// plain shape or an interval is out of range (the slow path then says why).
    /// `details` false: the intervals' id, note and device are checked but not kept (left
    /// empty and nil), for a reader that adds up times (`swctl report`) and need not pay
    /// for a string each per interval.
    static func scan(_ message: [UInt8], details: Bool = true) -> (intervals: [Interval], continues: Bool)? {
        message.withUnsafeBytes { bytes in
            var scanner = Scanner(bytes: bytes, details: details)
            return scanner.reply()
        }
    }

    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        let details: Bool
        var index = 0
        /// The device of the interval before: intervals of one device in a row share it
        /// rather than each making the same string.
        var lastDevice = ""

        init(bytes: UnsafeRawBufferPointer, details: Bool) {
            self.bytes = bytes
            self.details = details
        }

        mutating func reply() -> (intervals: [Interval], continues: Bool)? {
            guard literal(#"{"parameters":{"intervals":["#) else { return nil }
            var intervals: [Interval] = []
            if !literal("]") {
                while true {
                    guard let interval = object() else { return nil }
                    intervals.append(interval)
                    if literal(",") { continue }
                    guard literal("]") else { return nil }
                    break
                }
            }
            guard literal("}") else { return nil }
            let continues = literal(#","continues":true"#)
            guard literal("}"), index == bytes.count else { return nil }
            return (intervals, continues)
        }

        /// One interval object: `id`, `name`, `start_ms`, `end_ms` (absent for one still
        /// counting), `elapsed_ms`, `note` and `device`, in any order, each at most once
        /// (`name`, `start_ms` and `elapsed_ms` required, as `Interval(json:)` requires them).
        /// Any other key gives nil: the slow path knows what to do with it.
        mutating func object() -> Interval? {
            guard literal("{") else { return nil }
            var id: String?
            var name: String?
            var start: Int64?
            var end: Int64?
            var elapsed: Int64?
            var note: String?
            var device: String?
            var first = true
            while !literal("}") {
                guard first || literal(","), index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
                first = false
                // Dispatched on the key's first letter, then checked whole: one comparison
                // per key, not one per key known.
                guard index + 1 < bytes.count else { return nil }
                switch bytes[index + 1] {
                case UInt8(ascii: "i"):
                    guard id == nil, literal(#""id":"#), let value = detail() else { return nil }
                    id = value
                case UInt8(ascii: "n") where literal(#""name":"#):
                    guard name == nil, let value = string() else { return nil }
                    name = value
                case UInt8(ascii: "n"):
                    guard note == nil, literal(#""note":"#), let value = detail() else { return nil }
                    note = value
                case UInt8(ascii: "s"):
                    guard start == nil, literal(#""start_ms":"#), let value = integer() else { return nil }
                    start = value
                case UInt8(ascii: "e") where literal(#""end_ms":"#):
                    guard end == nil, let value = integer() else { return nil }
                    end = value
                case UInt8(ascii: "e"):
                    guard elapsed == nil, literal(#""elapsed_ms":"#), let value = integer() else { return nil }
                    elapsed = value
                case UInt8(ascii: "d"):
                    guard device == nil, literal(#""device":"#), let range = plainString() else { return nil }
                    let raw = UnsafeRawBufferPointer(rebasing: bytes[range])
                    if lastDevice.utf8.elementsEqual(raw) {
                        device = lastDevice
                    } else if details {
                        guard let value = String(validating: raw, as: UTF8.self) else { return nil }
                        lastDevice = value
                        device = value
                    } else {
                        guard Self.isValidUTF8(raw) else { return nil }
                        device = ""
                    }
                default:
                    return nil
                }
            }
            guard let name, let start, let elapsed else { return nil }
            // The ranges `Interval(json:)` checks.
            let latest = Interval.latestMs
            guard (0...latest).contains(start), (0...latest).contains(elapsed) else { return nil }
            if let end, !(start...latest).contains(end) { return nil }
            return Interval(
                id: details ? id ?? "" : "", name: name, startMs: start, endMs: end, elapsedMs: elapsed, note: details ? note : nil,
                device: details ? device ?? "" : ""
            )
        }

        /// An id or a note: a string as `string()` reads it, made only with `details` (else
        /// checked and given as ""; the caller drops it).
        mutating func detail() -> String? {
            if details { return string() }
            guard let range = plainString(), Self.isValidUTF8(UnsafeRawBufferPointer(rebasing: bytes[range])) else { return nil }
            return ""
        }

        /// Whether `raw` is valid UTF-8, without making a string of it when it is ASCII (an
        /// id always, a device's name mostly).
        static func isValidUTF8(_ raw: UnsafeRawBufferPointer) -> Bool {
            raw.allSatisfy { $0 < 0x80 } || String(validating: raw, as: UTF8.self) != nil
        }

        /// A string without escapes or control characters, valid UTF-8.
        mutating func string() -> String? {
            guard let range = plainString() else { return nil }
            return String(validating: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }

        /// Whether the bytes at `index` are `text` (then passed).
        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            let expected = text.utf8Start
            // Loads from the base address, within the bounds checked above (the buffer's
            // subscript checks each index again).
            guard let base = bytes.baseAddress else { return count == 0 }
            for offset in 0..<count where base.load(fromByteOffset: index + offset, as: UInt8.self) != expected[offset] { return false }
            index += count
            return true
        }

        /// A string without escapes or control characters: its bytes' range.
        mutating func plainString() -> Range<Int>? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let start = index + 1
            var position = start
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    index = position + 1
                    return start..<position
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                position += 1
            }
            return nil
        }

        /// A non-negative integer as JSON writes it: digits, no leading zero, no fraction or
        /// exponent (a negative one is out of range anyway: the slow path says so).
        mutating func integer() -> Int64? {
            let start = index
            var value: Int64 = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(Int64(bytes[index] - UInt8(ascii: "0")))
                guard !o1, !o2 else { return nil }
                value = sum
                index += 1
            }
            guard index > start, index - start == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] | 0x20 == UInt8(ascii: "e") { return nil }
            return value
        }
    }
}
