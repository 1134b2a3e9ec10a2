import Glibc
import StopwatchProtocol
import Varlink

/// One interval line of the journal,
/// `{"id":…,"name":…,"start_ms":…,"end_ms":…,"elapsed_ms":…[,"note":…][,"phase":…]}`: written,
/// and read back fast (`phase`: the label of the cycle phase the interval was). Lines of the release before ids have no `id`: theirs is derived from their
/// content (`IntervalIdentity.derived`). Correction lines (`{"op":…`) are `HistoryRecord`'s.
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

    /// The line for `interval`, newline included (its `device` is not written: a device's
    /// folder says whose it is).
    package static func encode(_ interval: Interval, into bytes: inout [UInt8]) {
        encodeObject(interval, device: nil, into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// `interval` as the JSON object a line (`device` nil) and a `History` reply (its
    /// `device`) hold, written straight to bytes (no `JSONValue` tree: a reply holds 10,000
    /// of them). An interval without an id (none known) is written without one.
    package static func encodeObject(_ interval: Interval, device: String?, into bytes: inout [UInt8]) {
        if interval.id.isEmpty {
            bytes.append(contentsOf: #"{"name":"#.utf8)
        } else {
            bytes.append(contentsOf: #"{"id":""#.utf8)
            bytes.append(contentsOf: interval.id.utf8)
            bytes.append(contentsOf: #"","name":"#.utf8)
        }
        appendString(interval.name, to: &bytes)
        bytes.append(contentsOf: #","start_ms":"#.utf8)
        JSONValue.writeInteger(interval.startMs, into: &bytes)
        if let end = interval.endMs {
            bytes.append(contentsOf: #","end_ms":"#.utf8)
            JSONValue.writeInteger(end, into: &bytes)
        }
        bytes.append(contentsOf: #","elapsed_ms":"#.utf8)
        JSONValue.writeInteger(interval.elapsedMs, into: &bytes)
        if let note = interval.note {
            bytes.append(contentsOf: #","note":"#.utf8)
            appendString(note, to: &bytes)
        }
        if let phase = interval.phase {
            bytes.append(contentsOf: #","phase":"#.utf8)
            appendString(phase, to: &bytes)
        }
        if let device {
            bytes.append(contentsOf: #","device":"#.utf8)
            appendString(device, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// `text` as a JSON string, the same bytes `JSONValue.writeString` writes: a name with
    /// nothing to escape (every one the daemon accepts but those with `"` or `\`) is copied
    /// whole, not a byte at a time through its escaping.
    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        let copied = text.withUTF8 { utf8 -> Bool in
            for byte in utf8 where byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                return false
            }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return true
        }
        if !copied { JSONValue.writeString(text, into: &bytes) }
    }

    /// The interval a line (without its newline) holds, or nil when it is not one: not
    /// JSON, a field missing or of the wrong type, or out of range.
    /// A line without an id gets its derived one; an id that is not 16 lowercase hex digits,
    /// a note that breaks the note rule, a phase that is not a phase's label (a string, as
    /// `CyclePlan.isValidLabel` says), or a `device` key (never written) make it no interval.
    package static func parse(_ line: UnsafeRawBufferPointer) -> Interval? {
        let interval = fastParse(line) ?? slowParse(line)
        guard var interval, isInRange(interval) else { return nil }
        if interval.id.isEmpty {
            interval.id = IntervalIdentity.derived(
                name: interval.name, startMs: interval.startMs, endMs: interval.endMs ?? 0, elapsedMs: interval.elapsedMs
            )
        } else if !IntervalID.isValid(interval.id) {
            return nil
        }
        guard isValidText(of: interval) else { return nil }
        return interval
    }

    /// Whether an interval's note and phase, if it has them, are as the daemon writes them:
    /// what a line, a correction and another device's `open.json` are checked by.
    static func isValidText(of interval: Interval) -> Bool {
        (interval.note.map(IntervalNote.isValid) ?? true) && (interval.phase.map(CyclePlan.isValidLabel) ?? true)
    }

    /// Whether a line is a correction record (`{"op":`), told by its first bytes alone:
    /// the journal's interval lines are not parsed to find them.
    package static func isCorrection(_ line: UnsafeRawBufferPointer) -> Bool {
        before(#"{"op":"#, in: line, at: 6) != nil
    }

    /// The start and end of a line of exactly the shape `encode` writes, read backwards from
    /// its end (`…,"start_ms":S,"end_ms":E,"elapsed_ms":L}`) without reading its name; nil
    /// for any other line. Enough to pass over a line that ends before a query's `since`
    /// in a fraction of a parse: `log --since today` reads a month of them to find today's.
    static func plainStartAndEnd(_ line: UnsafeRawBufferPointer) -> (start: Int64, end: Int64)? {
        // Plain loops on an index passed along: a generic `elementsEqual` and closures that
        // capture the index (checked for exclusive access at run time) cost more a line
        // than the parse this is to save.
        // A line that does not even begin as the daemon's do is parsed, so that its damage
        // is counted (and said) even by calls with a `since`.
        guard before(#"{"name":""#, in: line, at: 9) != nil || hasIDPrefix(line),
            let brace = before("}", in: line, at: line.count),
            let (elapsedDigits, _) = digits(before: brace, in: line),
            let elapsedKey = before(#","elapsed_ms":"#, in: line, at: elapsedDigits),
            let (endDigits, end) = digits(before: elapsedKey, in: line),
            let endKey = before(#","end_ms":"#, in: line, at: endDigits),
            let (startDigits, start) = digits(before: endKey, in: line),
            before(#","start_ms":"#, in: line, at: startDigits) != nil
        else { return nil }
        return (start, end)
    }

    /// An interval line of exactly the shape the daemon writes, with an id, checked valid
    /// without building an `Interval`: where its name's bytes are, and its numbers.
    struct Plain {
        /// Its id's 16 lowercase hex digits as a number.
        var id: UInt64
        /// Its name's bytes in the line (printable ASCII without `"`, `\` or `/`: a valid name
        /// written as it is, with nothing to escape).
        var name: Range<Int>
        var start: Int64
        var end: Int64
        var elapsed: Int64
    }

    /// The line, read as `Plain`, if it is exactly
    /// `{"id":"<16 hex>","name":"<name>","start_ms":S,"end_ms":E,"elapsed_ms":L}` with a name of
    /// printable ASCII that is valid, numbers without leading zeros, and in range: then the
    /// line is, byte for byte, the JSON object `encodeObject` writes for it (without
    /// `device`), and `History` copies it into a reply instead of parsing it. Nil for any
    /// other line (a note, a phase, escapes, other spacing, no id, non-ASCII): those are
    /// parsed.
    static func plain(_ line: UnsafeRawBufferPointer) -> Plain? {
        guard hasIDPrefix(line), let id = hexNumber(line, at: 7), let fields = plainFields(line, nameStart: 33) else { return nil }
        return Plain(id: id, name: 33..<fields.nameEnd, start: fields.start, end: fields.end, elapsed: fields.elapsed)
    }

    /// The end of a line of exactly `plain`'s shape, or of that shape without an id (as the
    /// release before ids wrote them), checked as `plain` checks one: so non-nil only for a
    /// line `parse` accepts, with the end it reads. Nil for any other line (which may still
    /// be one: parse it). What the correction index learns ends from, without a parse.
    static func plainEnd(_ line: UnsafeRawBufferPointer) -> Int64? {
        if hasIDPrefix(line) {
            guard isHexID(line, at: 7) else { return nil }
            return plainFields(line, nameStart: 33)?.end
        }
        guard before(#"{"name":""#, in: line, at: 9) != nil else { return nil }
        return plainFields(line, nameStart: 9)?.end
    }

    /// What follows the name, whose first byte is at `nameStart` (just after `"name":"`), in
    /// a line of the daemon's exact shape: `…","start_ms":S,"end_ms":E,"elapsed_ms":L}` read
    /// backwards, the name checked valid and with nothing to escape, the numbers without
    /// leading zeros and in range. Nil for any other line.
    @inline(__always)
    private static func plainFields(
        _ line: UnsafeRawBufferPointer, nameStart: Int
    ) -> (nameEnd: Int, start: Int64, end: Int64, elapsed: Int64)? {
        guard let brace = before("}", in: line, at: line.count), brace == line.count - 1,
            let (elapsedDigits, elapsed) = jsonDigits(before: brace, in: line),
            let elapsedKey = before(#","elapsed_ms":"#, in: line, at: elapsedDigits),
            let (endDigits, end) = jsonDigits(before: elapsedKey, in: line),
            let endKey = before(#","end_ms":"#, in: line, at: endDigits),
            let (startDigits, start) = jsonDigits(before: endKey, in: line),
            let startKey = before(#","start_ms":"#, in: line, at: startDigits),
            startKey > nameStart + 1, line[startKey - 1] == UInt8(ascii: "\""),
            end >= start, end <= maximumTimeMilliseconds, elapsed <= maximumElapsedMilliseconds,
            isPlainValidName(UnsafeRawBufferPointer(rebasing: line[nameStart..<(startKey - 1)]))
        else { return nil }
        return (startKey - 1, start, end, elapsed)
    }

    /// 16 lowercase hex digits at `offset` as a number; nil if any is not one.
    static func hexNumber(_ line: UnsafeRawBufferPointer, at offset: Int) -> UInt64? {
        guard offset >= 0, line.count >= offset + IntervalID.length, let base = line.baseAddress else { return nil }
        // Plain loads within the bounds checked above, and one test for all 16 digits: it
        // runs for every line a History call copies.
        var value: UInt64 = 0
        var bad: UInt8 = 0
        for index in offset..<(offset + IntervalID.length) {
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            let decimal = byte &- UInt8(ascii: "0")
            let letter = byte &- UInt8(ascii: "a")
            let isDecimal = decimal < 10
            bad |= (isDecimal || letter < 6) ? 0 : 1
            value = value << 4 | UInt64(isDecimal ? decimal : letter &+ 10)
        }
        return bad == 0 ? value : nil
    }

    /// `digits(before:in:)`, and only as JSON writes a number: no leading zero.
    private static func jsonDigits(before end: Int, in line: UnsafeRawBufferPointer) -> (Int, Int64)? {
        guard let (start, value) = digits(before: end, in: line) else { return nil }
        if end - start > 1, line[start] == UInt8(ascii: "0") { return nil }
        return (start, value)
    }

    /// `StopwatchName.isValid` for a name of printable ASCII with nothing JSON escapes (no
    /// `"` or `\`), on its bytes; false for any other (which the parse then reads).
    private static func isPlainValidName(_ name: UnsafeRawBufferPointer) -> Bool {
        guard (1...StopwatchName.maximumLength).contains(name.count), let base = name.baseAddress, name[0] != 0x20, name[name.count - 1] != 0x20
        else { return false }
        if name[0] == UInt8(ascii: "."), name.count == 1 || (name.count == 2 && name[1] == UInt8(ascii: ".")) { return false }
        guard name.count >= 8 else {
            for byte in name where byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/") {
                return false
            }
            return true
        }
        // Eight bytes at a time, the last word overlapping the one before: it runs for every
        // line a History call copies, and for every line the correction index learns from.
        var bad: UInt64 = 0
        var offset = 0
        while offset < name.count - 8 {
            bad |= badNameBytes(base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        bad |= badNameBytes(base.loadUnaligned(fromByteOffset: name.count - 8, as: UInt64.self))
        return bad == 0
    }

    /// Each byte's high bit, and each byte's low bit: the masks of the word checks below.
    private static let highBits: UInt64 = 0x8080_8080_8080_8080
    private static let lowBits: UInt64 = 0x0101_0101_0101_0101

    /// Non-zero when a byte of `word` cannot be in a plain name: not printable ASCII
    /// (below 0x20, 0x7F or above), `"`, `\` or `/`. Each test sets a byte's high bit: on
    /// bytes made 0x80 or more (or taken below 0x80) first, no subtraction borrows from the
    /// next byte.
    @inline(__always)
    private static func badNameBytes(_ word: UInt64) -> UInt64 {
        let raised = word | highBits
        let ascii = word & ~highBits
        let atLeastSpace = (raised &- 0x20 &* lowBits) & highBits
        let atMostTilde = ((0x7E &* lowBits | highBits) &- ascii) & highBits
        func differs(_ byte: UInt8) -> UInt64 {
            (((word ^ (UInt64(byte) &* lowBits)) | highBits) &- lowBits) & highBits
        }
        let allowed = atLeastSpace & atMostTilde & differs(UInt8(ascii: "\"")) & differs(UInt8(ascii: "\\")) & differs(UInt8(ascii: "/"))
        return (word & highBits) | (~allowed & highBits)
    }

    /// Whether the 16 bytes at `offset` are lowercase hex digits (what `hexNumber` reads),
    /// eight at a time.
    static func isHexID(_ line: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        guard offset >= 0, line.count >= offset + IntervalID.length, let base = line.baseAddress else { return false }
        return badHexBytes(base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            | badHexBytes(base.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)) == 0
    }

    /// Non-zero when a byte of `word` is not `0`-`9` or `a`-`f` (as `badNameBytes`).
    @inline(__always)
    private static func badHexBytes(_ word: UInt64) -> UInt64 {
        let raised = word | highBits
        let ascii = word & ~highBits
        let atLeastZero = (raised &- 0x30 &* lowBits) & highBits
        let atMostNine = ((0x39 &* lowBits | highBits) &- ascii) & highBits
        let atLeastA = (raised &- 0x61 &* lowBits) & highBits
        let atMostF = ((0x66 &* lowBits | highBits) &- ascii) & highBits
        return (word & highBits) | (~(atLeastZero & atMostNine | atLeastA & atMostF) & highBits)
    }

    /// False when a line of the daemon's shape (`{"id":"…`) has an id that does not begin
    /// with `prefix`: a lookup by id passes over it without a parse. True for any other line
    /// (one without an id, whose id is derived, or of another shape): it must be parsed.
    static func mayHaveID(_ prefix: String, _ line: UnsafeRawBufferPointer) -> Bool {
        guard line.count > 7 + IntervalID.length, before(#"{"id":""#, in: line, at: 7) != nil else { return true }
        var index = 7
        for byte in prefix.utf8 {
            guard line[index] == byte else { return false }
            index += 1
        }
        return true
    }

    /// Whether a line begins `{"id":"<16 digits>","name":"`, as the daemon writes one.
    static func hasIDPrefix(_ line: UnsafeRawBufferPointer) -> Bool {
        // `{"id":"` (7 bytes), 16 digits, then `","name":"` (10 bytes), ending at 33.
        guard before(#"{"id":""#, in: line, at: 7) != nil, line.count > 33 else { return false }
        return before(#"","name":""#, in: line, at: 33) != nil
    }

    /// The index where `text` (a key, 8 to 16 bytes, or one byte) begins if it ends at `end`
    /// in `line`, else nil. Compared as two overlapping 8-byte words: it runs for every line passed
    /// over, and a byte loop cost several instructions a byte.
    private static func before(_ text: StaticString, in line: UnsafeRawBufferPointer, at end: Int) -> Int? {
        let count = text.utf8CodeUnitCount
        guard end >= count, end <= line.count, let base = line.baseAddress else { return nil }
        let start = end - count
        let expected = UnsafeRawPointer(text.utf8Start)
        if count < 8 {
            for offset in 0..<count where line[start + offset] != expected.load(fromByteOffset: offset, as: UInt8.self) { return nil }
            return start
        }
        precondition(count <= 16)
        guard (base + start).loadUnaligned(as: UInt64.self) == expected.loadUnaligned(as: UInt64.self),
            (base + end - 8).loadUnaligned(as: UInt64.self) == expected.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        else { return nil }
        return start
    }

    /// The digits that end at `end` in `line` (1 to 18 of them: no overflow): where they
    /// begin, and their value.
    private static func digits(before end: Int, in line: UnsafeRawBufferPointer) -> (Int, Int64)? {
        // One pass backwards, each digit times its power of ten (18 digits fit in Int64);
        // loads from the base address, within the bounds checked here (the buffer's
        // subscript checks every byte's index again).
        guard end <= line.count, let base = line.baseAddress else { return nil }
        var start = end
        var value: Int64 = 0
        var power: Int64 = 1
        while start > 0, end - start < 18 {
            let digit = base.load(fromByteOffset: start - 1, as: UInt8.self) &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            value &+= Int64(digit) &* power
            power &*= 10
            start -= 1
        }
        guard start < end else { return nil }
        return (start, value)
    }

    static func isInRange(_ interval: Interval) -> Bool {
        guard let end = interval.endMs else { return false }
        return interval.startMs >= 0 && end >= interval.startMs && end <= maximumTimeMilliseconds
            && interval.elapsedMs >= 0 && interval.elapsedMs <= maximumElapsedMilliseconds
            && StopwatchName.isValid(interval.name)
    }

    private static func slowParse(_ line: UnsafeRawBufferPointer) -> Interval? {
        // A correction (`op`) is no interval line, nor is a line that names its device.
        guard let json = try? JSONParser.parse(Array(line)), case .object(let object) = json,
            object["op"] == nil, object["device"] == nil
        else { return nil }
        return try? Interval(json: json)
    }

    /// Whether `key` is `text`: its length first (most keys differ in it), then `memcmp`; a
    /// generic comparison with a string's UTF-8 view cost more than the rest of the parse.
    private static func isKey(_ key: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        guard key.count == text.utf8CodeUnitCount, let base = key.baseAddress else { return false }
        return memcmp(base, text.utf8Start, key.count) == 0
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
        var id: String?
        var note: String?
        var phase: String?
        var start: Int64?, end: Int64?, elapsed: Int64?
        while true {
            guard let key = plainString(), expect(UInt8(ascii: ":")) else { return nil }
            let keyBytes = UnsafeRawBufferPointer(rebasing: line[key])
            if isKey(keyBytes, "name") {
                guard name == nil, let range = plainString() else { return nil }
                guard let text = String(validating: UnsafeRawBufferPointer(rebasing: line[range]), as: UTF8.self) else { return nil }
                name = text
            } else if isKey(keyBytes, "id") {
                guard id == nil, let range = plainString() else { return nil }
                guard let text = String(validating: UnsafeRawBufferPointer(rebasing: line[range]), as: UTF8.self) else { return nil }
                id = text
            } else if isKey(keyBytes, "note") {
                guard note == nil, let range = plainString() else { return nil }
                guard let text = String(validating: UnsafeRawBufferPointer(rebasing: line[range]), as: UTF8.self) else { return nil }
                note = text
            } else if isKey(keyBytes, "phase") {
                // Anything but a string without escapes (a number, an escape) is the slow
                // path's to read or refuse.
                guard phase == nil, let range = plainString() else { return nil }
                guard let text = String(validating: UnsafeRawBufferPointer(rebasing: line[range]), as: UTF8.self) else { return nil }
                phase = text
            } else if isKey(keyBytes, "start_ms") {
                guard start == nil, let value = integer() else { return nil }
                start = value
            } else if isKey(keyBytes, "end_ms") {
                guard end == nil, let value = integer() else { return nil }
                end = value
            } else if isKey(keyBytes, "elapsed_ms") {
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
            return Interval(id: id ?? "", name: name, startMs: start, endMs: end, elapsedMs: elapsed, note: note, phase: phase)
        }
    }
}
