import StopwatchProtocol
import Varlink

/// One line of the journal, `{"name":…,"start_ms":…,"end_ms":…,"elapsed_ms":…}`: written,
/// and read back fast.
///
/// Package-visible: swbench writes a history in this format and parses it as its baseline.
///
/// Reading a million lines must take seconds, not minutes: the lines the daemon writes
/// (keys it knows, integers, a name without escapes) are read in one pass over the bytes,
/// without building a JSON tree. Anything else (escapes, other keys, other spacing that the
/// pass does not expect) goes through the full `JSONParser`, so a line edited by hand still
/// reads the same.
package enum HistoryLine {
    /// Elapsed time beyond this is out of range (SPEC §4: more than 100 years).
    static let maximumElapsedMilliseconds: Int64 = 100 * 366 * 86_400_000
    /// The end of 9999 (UTC): a time past it is out of range (the client refuses it too).
    static let maximumTimeMilliseconds = Interval.latestMs

    /// The line for `interval`, newline included.
    package static func encode(_ interval: Interval, into bytes: inout [UInt8]) {
        encodeObject(interval, into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// `interval` as the JSON object a line and a `History` reply both hold, written
    /// straight to bytes (no `JSONValue` tree: a reply holds 10,000 of them).
    static func encodeObject(_ interval: Interval, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"name":"#.utf8)
        JSONValue.writeString(interval.name, into: &bytes)
        bytes.append(contentsOf: #","start_ms":"#.utf8)
        appendDecimal(interval.startMs, to: &bytes)
        if let end = interval.endMs {
            bytes.append(contentsOf: #","end_ms":"#.utf8)
            appendDecimal(end, to: &bytes)
        }
        bytes.append(contentsOf: #","elapsed_ms":"#.utf8)
        appendDecimal(interval.elapsedMs, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// `value` in decimal, straight into `bytes`: `String(value)` built and copied a string
    /// for each of the three numbers of each of a million intervals.
    static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 24 bytes: Int64's 19 digits fit
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 - count)...]))
        }
    }

    /// The interval a line (without its newline) holds, or nil when it is not one: not
    /// JSON, a field missing or of the wrong type, or out of range.
    package static func parse(_ line: UnsafeRawBufferPointer) -> Interval? {
        let interval = fastParse(line) ?? slowParse(line)
        guard let interval, isInRange(interval) else { return nil }
        return interval
    }

    /// The start and end of a line of exactly the shape `encode` writes, read backwards from
    /// its end (`…,"start_ms":S,"end_ms":E,"elapsed_ms":L}`) without reading its name; nil
    /// for any other line. Enough to pass over a line that ends before a query's `since`
    /// in a fraction of a parse: `log --since today` reads a month of them to find today's.
    static func plainStartAndEnd(_ line: UnsafeRawBufferPointer) -> (start: Int64, end: Int64)? {
        var index = line.count
        func expectBefore(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index >= count else { return false }
            let expected = UnsafeRawBufferPointer(start: text.utf8Start, count: count)
            guard UnsafeRawBufferPointer(rebasing: line[(index - count)..<index]).elementsEqual(expected) else { return false }
            index -= count
            return true
        }
        /// The digits just before `index`, as a number (at most 18 of them: no overflow).
        func digitsBefore() -> Int64? {
            let end = index
            while index > 0, end - index < 18, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(line[index - 1]) { index -= 1 }
            guard index < end else { return nil }
            var value: Int64 = 0
            for position in index..<end { value = value * 10 + Int64(line[position] - UInt8(ascii: "0")) }
            return value
        }
        guard expectBefore("}"), digitsBefore() != nil, expectBefore(#","elapsed_ms":"#),
            let end = digitsBefore(), expectBefore(#","end_ms":"#),
            let start = digitsBefore(), expectBefore(#","start_ms":"#)
        else { return nil }
        return (start, end)
    }

    static func isInRange(_ interval: Interval) -> Bool {
        guard let end = interval.endMs else { return false }
        return interval.startMs >= 0 && end >= interval.startMs && end <= maximumTimeMilliseconds
            && interval.elapsedMs >= 0 && interval.elapsedMs <= maximumElapsedMilliseconds
            && StopwatchName.isValid(interval.name)
    }

    private static func slowParse(_ line: UnsafeRawBufferPointer) -> Interval? {
        guard let json = try? JSONParser.parse(Array(line)) else { return nil }
        return try? Interval(json: json)
    }

    /// Nil when the line is not of the plain shape the daemon writes: the slow path decides.
    private static func fastParse(_ line: UnsafeRawBufferPointer) -> Interval? {
        var index = 0
        let count = line.count
        func skipSpaces() {
            while index < count, line[index] == 0x20 || line[index] == 0x09 || line[index] == 0x0D { index += 1 }
        }
        func expect(_ byte: UInt8) -> Bool {
            skipSpaces()
            guard index < count, line[index] == byte else { return false }
            index += 1
            return true
        }
        /// A string without escapes: its bytes' range.
        func plainString() -> Range<Int>? {
            guard expect(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < count {
                let byte = line[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return start..<(index - 1)
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                index += 1
            }
            return nil
        }
        func integer() -> Int64? {
            skipSpaces()
            var negative = false
            if index < count, line[index] == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            let start = index
            var value: Int64 = 0
            while index < count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(line[index]) {
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(Int64(line[index] - UInt8(ascii: "0")))
                guard !o1, !o2 else { return nil }
                value = sum
                index += 1
            }
            guard index > start else { return nil }
            // A fraction or exponent is not an integer; leading zeros are not JSON.
            if index < count, line[index] == UInt8(ascii: ".") || line[index] | 0x20 == UInt8(ascii: "e") { return nil }
            if index - start > 1, line[start] == UInt8(ascii: "0") { return nil }
            return negative ? -value : value
        }
        guard expect(UInt8(ascii: "{")) else { return nil }
        var name: String?
        var start: Int64?, end: Int64?, elapsed: Int64?
        while true {
            guard let key = plainString(), expect(UInt8(ascii: ":")) else { return nil }
            let keyBytes = UnsafeRawBufferPointer(rebasing: line[key])
            if keyBytes.elementsEqual("name".utf8) {
                guard name == nil, let range = plainString() else { return nil }
                guard let text = String(validating: UnsafeRawBufferPointer(rebasing: line[range]), as: UTF8.self) else { return nil }
                name = text
            } else if keyBytes.elementsEqual("start_ms".utf8) {
                guard start == nil, let value = integer() else { return nil }
                start = value
            } else if keyBytes.elementsEqual("end_ms".utf8) {
                guard end == nil, let value = integer() else { return nil }
                end = value
            } else if keyBytes.elementsEqual("elapsed_ms".utf8) {
                guard elapsed == nil, let value = integer() else { return nil }
                elapsed = value
            } else {
                return nil
            }
            skipSpaces()
            guard index < count else { return nil }
            if line[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard line[index] == UInt8(ascii: "}") else { return nil }
            index += 1
            skipSpaces()
            guard index == count, let name, let start, let end, let elapsed else { return nil }
            return Interval(name: name, startMs: start, endMs: end, elapsedMs: elapsed)
        }
    }
}
