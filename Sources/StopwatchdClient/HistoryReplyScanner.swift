import Glibc
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
    static func scan(_ message: [UInt8]) -> (intervals: [Interval], continues: Bool)? {
        message.withUnsafeBytes { bytes in
            var scanner = Scanner(bytes: bytes)
            var intervals: [Interval] = []
            guard let continues = scanner.reply({ (scanner: inout Scanner) in
                guard let interval = scanner.object() else { return false }
                intervals.append(interval)
                return true
            }) else { return nil }
            return (intervals, continues)
        }
    }

    /// The intervals' times, their names numbered in `names`, and whether more replies
    /// follow; nil as `scan` gives it (then `names` may hold names of this reply: harmless,
    /// a name's number never changes). The ids, notes and devices are checked (strings, valid
    /// UTF-8), not kept: for a reader that adds up times (`swctl report`), which need not pay
    /// for four strings per interval.
    static func scanTimes(_ message: [UInt8], names: inout NameTable) -> (times: [IntervalTimes], continues: Bool)? {
        message.withUnsafeBytes { bytes in
            var scanner = Scanner(bytes: bytes)
            var times: [IntervalTimes] = []
            // An interval of the daemon's shape is about 110 bytes or more.
            times.reserveCapacity(message.count / 100)
            guard let continues = scanner.reply({ (scanner: inout Scanner) in
                if let plain = scanner.plainTimes(names: &names) {
                    times.append(plain)
                    return true
                }
                // Not the daemon's order (another daemon's, a client's test): the general read.
                guard let interval = scanner.object() else { return false }
                times.append(IntervalTimes(nameNumber: names.number(of: interval.name), startMs: interval.startMs, endMs: interval.endMs, elapsedMs: interval.elapsedMs))
                return true
            }) else { return nil }
            return (times, continues)
        }
    }

    struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var index = 0
        /// The device of the interval before: intervals of one device in a row share it
        /// rather than each making the same string (or checking the same bytes).
        var lastDevice = ""
        var lastDeviceBytes: Range<Int>?

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        /// The reply around its intervals, each read by `object` (false: not plain): whether
        /// it continues, or nil.
        mutating func reply(_ object: (inout Scanner) -> Bool) -> Bool? {
            guard literal(#"{"parameters":{"intervals":["#) else { return nil }
            if !literal("]") {
                while true {
                    guard object(&self) else { return nil }
                    if literal(",") { continue }
                    guard literal("]") else { return nil }
                    break
                }
            }
            guard literal("}") else { return nil }
            let continues = literal(#","continues":true"#)
            guard literal("}"), index == bytes.count else { return nil }
            return continues
        }

        /// One interval object exactly as the daemon writes it,
        /// `{"id":…,"name":…,"start_ms":S[,"end_ms":E],"elapsed_ms":L[,"note":…][,"phase":…],"device":…}`,
        /// read as its times; nil (and nothing read) for any other, which `object` then reads.
        mutating func plainTimes(names: inout NameTable) -> IntervalTimes? {
            let begin = index
            guard literal(#"{"id":"#), let id = plainString(), Self.isValidUTF8(slice(id)),
                literal(#","name":"#), let nameBytes = plainString(),
                literal(#","start_ms":"#), let start = integer()
            else { index = begin; return nil }
            var end: Int64?
            if literal(#","end_ms":"#) {
                guard let value = integer() else { index = begin; return nil }
                end = value
            }
            guard literal(#","elapsed_ms":"#), let elapsed = integer() else { index = begin; return nil }
            if literal(#","note":"#) {
                guard let note = plainString(), Self.isValidUTF8(slice(note)) else { index = begin; return nil }
            }
            if literal(#","phase":"#) {
                guard let phase = plainString(), Self.isValidUTF8(slice(phase)) else { index = begin; return nil }
            }
            guard literal(#","device":"#), let device = plainString(), literal("}") else { index = begin; return nil }
            if let last = lastDeviceBytes, last.count == device.count, memcmp(bytes.baseAddress! + last.lowerBound, bytes.baseAddress! + device.lowerBound, device.count) == 0 {
                // The same bytes as the device before: already checked.
            } else {
                guard Self.isValidUTF8(slice(device)) else { index = begin; return nil }
                lastDeviceBytes = device
            }
            let latest = Interval.latestMs
            guard start <= latest, elapsed <= latest, end.map({ (start...latest).contains($0) }) ?? true,
                let name = names.number(of: slice(nameBytes))
            else { index = begin; return nil }
            return IntervalTimes(nameNumber: name, startMs: start, endMs: end, elapsedMs: elapsed)
        }

        func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: bytes[range])
        }

        /// One interval object: `id`, `name`, `start_ms`, `end_ms` (absent for one still
        /// counting), `elapsed_ms`, `note`, `phase` and `device`, in any order, each at most once
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
            var phase: String?
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
                    guard id == nil, literal(#""id":"#), let value = string() else { return nil }
                    id = value
                case UInt8(ascii: "n") where literal(#""name":"#):
                    guard name == nil, let value = string() else { return nil }
                    name = value
                case UInt8(ascii: "n"):
                    guard note == nil, literal(#""note":"#), let value = string() else { return nil }
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
                case UInt8(ascii: "p"):
                    guard phase == nil, literal(#""phase":"#), let value = string() else { return nil }
                    phase = value
                case UInt8(ascii: "d"):
                    guard device == nil, literal(#""device":"#), let range = plainString() else { return nil }
                    let raw = slice(range)
                    if lastDevice.utf8.elementsEqual(raw) {
                        device = lastDevice
                    } else {
                        guard let value = String(validating: raw, as: UTF8.self) else { return nil }
                        lastDevice = value
                        device = value
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
            return Interval(id: id ?? "", name: name, startMs: start, endMs: end, elapsedMs: elapsed, note: note, phase: phase, device: device ?? "")
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

        /// Whether the bytes at `index` are `text` (then passed). Keys of 8 to 16 bytes are
        /// compared as two overlapping 8-byte words: it runs several times per interval.
        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            // Loads from the base address, within the bounds checked above.
            guard let base = bytes.baseAddress else { return count == 0 }
            let expected = UnsafeRawPointer(text.utf8Start)
            let here = base + index
            if count >= 8, count <= 16 {
                guard here.loadUnaligned(as: UInt64.self) == expected.loadUnaligned(as: UInt64.self),
                    here.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) == expected.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                else { return false }
            } else {
                guard memcmp(here, expected, count) == 0 else { return false }
            }
            index += count
            return true
        }

        /// A string without escapes or control characters: its bytes' range.
        mutating func plainString() -> Range<Int>? {
            guard index < bytes.count, let base = bytes.baseAddress, base.load(fromByteOffset: index, as: UInt8.self) == UInt8(ascii: "\"") else { return nil }
            let start = index + 1
            var position = start
            // Loads from the base address, each below `bytes.count`.
            while position < bytes.count {
                let byte = base.load(fromByteOffset: position, as: UInt8.self)
                if byte == UInt8(ascii: "\"") {
                    index = position + 1
                    return start..<position
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                position += 1
            }
            return nil
        }

        /// A non-negative integer as JSON writes it: 1 to 18 digits (no overflow; more is out
        /// of range anyway), no leading zero, no fraction or exponent (a negative one is out of
        /// range too: the slow path says so).
        mutating func integer() -> Int64? {
            guard let base = bytes.baseAddress else { return nil }
            let start = index
            var value: Int64 = 0
            // Loads from the base address, each below `bytes.count`.
            while index < bytes.count, index - start < 18 {
                let digit = base.load(fromByteOffset: index, as: UInt8.self) &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                value = value &* 10 &+ Int64(digit)
                index += 1
            }
            guard index > start, index - start == 1 || base.load(fromByteOffset: start, as: UInt8.self) != UInt8(ascii: "0") else { return nil }
            if index < bytes.count {
                let next = base.load(fromByteOffset: index, as: UInt8.self)
                // A 19th digit, a fraction or an exponent: the slow path.
                if next &- UInt8(ascii: "0") < 10 || next == UInt8(ascii: ".") || next | 0x20 == UInt8(ascii: "e") { return nil }
            }
            return value
        }
    }
}
