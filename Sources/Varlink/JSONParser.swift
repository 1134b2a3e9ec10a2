/// A strict RFC 8259 JSON parser for untrusted input.
///
/// It accepts exactly the JSON grammar: no comments, trailing commas, single quotes, NaN or
/// Infinity, leading zeros or `+` signs, and only space, tab, line feed and carriage return as
/// whitespace. Strings must be valid UTF-8 and escapes must be well formed (a lone UTF-16
/// surrogate is an error; `\u0000` is allowed). Integers that fit `Int64` become `.int`; other
/// numbers become `.double` when finite, and are an error when they overflow. An object may not
/// repeat a key (keys are compared as Swift compares `String`s, so two canonically equivalent
/// spellings count as the same key, as they do for `JSONObject`'s subscript). Arrays and objects
/// may nest at most `maxDepth` deep; deeper input fails before any further recursion.
package struct JSONParser {
    /// Parses one JSON value filling all of `bytes` (whitespace allowed around it).
    package static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        guard !bytes.isEmpty else { throw JSONParseError("empty input", at: 0) }
        // Binding the bytes to UInt8 for the call lets the reader use a typed pointer.
        let result = bytes.withMemoryRebound(to: UInt8.self) { buffer in
            Result { () throws(JSONParseError) -> JSONValue in
                var reader = Reader(buffer, maxDepth: maxDepth)
                return try reader.parseDocument()
            }
        }
        return try result.get()
    }

    /// Parses one JSON value filling all of `bytes` (whitespace allowed around it).
    package static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) -> JSONValue in try parse(raw, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// Parses one JSON value filling all of `text` (whitespace allowed around it). Offsets in
    /// errors count UTF-8 bytes.
    package static func parse(_ text: String, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(UnsafeRawBufferPointer(buffer), maxDepth: maxDepth) }
        }
        return try result.get()
    }
}

/// Why `JSONParser` refused its input, and where.
package struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Short human text, such as `nesting deeper than 64 levels` or `duplicate key "name"`.
    package let reason: String
    /// The byte offset in the input where it went wrong.
    package let offset: Int

    package init(_ reason: String, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    package var description: String { "\(reason) at byte \(offset)" }
}

// MARK: - The reader

/// ASCII bytes the grammar names.
private enum ASCII {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let slash = UInt8(ascii: "/")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let lowerE = UInt8(ascii: "e")
    static let upperE = UInt8(ascii: "E")
    static let lowerU = UInt8(ascii: "u")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
}

/// Above this many members an object checks for repeated keys with a set instead of a scan,
/// so a huge object cannot make the check quadratic.
private let linearKeyCheckLimit = 12

/// The parsing state: the input, a position in it, and a buffer reused by escaped strings.
private struct Reader {
    let base: UnsafePointer<UInt8>
    let end: Int
    let maxDepth: Int
    var index = 0
    /// Where strings with escapes are assembled; kept between strings to save allocations.
    var scratch: [UInt8] = []

    init(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        // Callers never pass an empty buffer, so there is a base address.
        self.base = buffer.baseAddress!
        self.end = buffer.count
        self.maxDepth = max(0, maxDepth)
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        guard index < end else { throw JSONParseError("empty input", at: index) }
        let value = try parseValue(depth: 0)
        skipWhitespace()
        if index < end {
            throw JSONParseError("unexpected byte \(describe(base[index])) after the value", at: index)
        }
        return value
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < end {
            switch base[index] {
            case ASCII.space, ASCII.lineFeed, ASCII.carriageReturn, ASCII.tab: index += 1
            default: return
            }
        }
    }

    /// Parses the value starting at `index`, which is not whitespace. `depth` counts the arrays
    /// and objects around it.
    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < end else { throw endOfInput(expecting: "a value") }
        switch base[index] {
        case ASCII.quote: return .string(try parseString())
        case ASCII.openBrace: return try parseObject(depth: depth)
        case ASCII.openBracket: return try parseArray(depth: depth)
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case ASCII.minus, ASCII.zero...ASCII.nine: return try parseNumber()
        case let byte: throw JSONParseError("unexpected byte \(describe(byte)) where a value should start", at: index)
        }
    }

    // MARK: Containers

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < maxDepth else { throw tooDeep() }
        index += 1  // [
        skipWhitespace()
        if index < end && base[index] == ASCII.closeBracket {
            index += 1
            return .array([])
        }
        var elements: [JSONValue] = []
        while true {
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < end else { throw endOfInput(expecting: "',' or ']'") }
            switch base[index] {
            case ASCII.comma:
                index += 1
                skipWhitespace()
                if index < end && base[index] == ASCII.closeBracket {
                    throw JSONParseError("trailing comma before ']'", at: index)
                }
            case ASCII.closeBracket:
                index += 1
                return .array(elements)
            case let byte:
                throw JSONParseError("unexpected byte \(describe(byte)) where ',' or ']' should be", at: index)
            }
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < maxDepth else { throw tooDeep() }
        index += 1  // {
        skipWhitespace()
        if index < end && base[index] == ASCII.closeBrace {
            index += 1
            return .object(JSONObject())
        }
        var members: [JSONMember] = []
        var keySet: Set<String>? = nil
        while true {
            guard index < end else { throw endOfInput(expecting: "a string key") }
            guard base[index] == ASCII.quote else {
                if base[index] == ASCII.closeBrace && !members.isEmpty {
                    throw JSONParseError("trailing comma before '}'", at: index)
                }
                throw JSONParseError("unexpected byte \(describe(base[index])) where a string key should be", at: index)
            }
            let keyOffset = index
            let key = try parseString()
            if members.count < linearKeyCheckLimit {
                for member in members where member.key == key { throw duplicate(key, at: keyOffset) }
            } else {
                if keySet == nil { keySet = Set(members.lazy.map(\.key)) }
                if !keySet!.insert(key).inserted { throw duplicate(key, at: keyOffset) }
            }
            skipWhitespace()
            guard index < end else { throw endOfInput(expecting: "':'") }
            guard base[index] == ASCII.colon else {
                throw JSONParseError("unexpected byte \(describe(base[index])) where ':' should be", at: index)
            }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth + 1)
            members.append(JSONMember(key: key, value: value))
            skipWhitespace()
            guard index < end else { throw endOfInput(expecting: "',' or '}'") }
            switch base[index] {
            case ASCII.comma:
                index += 1
                skipWhitespace()
            case ASCII.closeBrace:
                index += 1
                return .object(JSONObject(members))
            case let byte:
                throw JSONParseError("unexpected byte \(describe(byte)) where ',' or '}' should be", at: index)
            }
        }
    }

    // MARK: Literals

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = index
        let count = literal.utf8CodeUnitCount
        let text = literal.utf8Start
        for offset in 0..<count {
            guard start + offset < end else { throw endOfInput(at: start + offset, expecting: "\(literal)") }
            let byte = base[start + offset]
            guard byte == text[offset] else {
                throw JSONParseError("unexpected byte \(describe(byte)) in the literal \(literal)", at: start + offset)
            }
        }
        index = start + count
    }

    // MARK: Numbers

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var i = index
        let negative = base[i] == ASCII.minus
        if negative { i += 1 }
        guard i < end else { throw endOfInput(at: i, expecting: "a digit") }

        // The integer part, accumulated while it fits.
        var magnitude: UInt64 = 0
        var overflowed = false
        let first = base[i]
        if first == ASCII.zero {
            i += 1
            if i < end && isDigit(base[i]) { throw JSONParseError("leading zero in a number", at: i - 1) }
        } else if isDigit(first) {
            while i < end, isDigit(base[i]) {
                let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(UInt64(base[i] &- ASCII.zero))
                magnitude = sum
                overflowed = overflowed || overflow1 || overflow2
                i += 1
            }
        } else {
            throw JSONParseError("unexpected byte \(describe(first)) where a digit should be", at: i)
        }

        var integral = true
        if i < end && base[i] == ASCII.dot {
            integral = false
            i += 1
            guard i < end else { throw endOfInput(at: i, expecting: "a digit after '.'") }
            guard isDigit(base[i]) else {
                throw JSONParseError("unexpected byte \(describe(base[i])) where a digit should follow '.'", at: i)
            }
            while i < end, isDigit(base[i]) { i += 1 }
        }
        if i < end && (base[i] == ASCII.lowerE || base[i] == ASCII.upperE) {
            integral = false
            i += 1
            if i < end && (base[i] == ASCII.plus || base[i] == ASCII.minus) { i += 1 }
            guard i < end else { throw endOfInput(at: i, expecting: "an exponent digit") }
            guard isDigit(base[i]) else {
                throw JSONParseError("unexpected byte \(describe(base[i])) where an exponent digit should be", at: i)
            }
            while i < end, isDigit(base[i]) { i += 1 }
        }
        index = i

        if integral && !overflowed {
            if !negative && magnitude <= UInt64(Int64.max) { return .int(Int64(magnitude)) }
            if negative && magnitude <= UInt64(Int64.max) + 1 { return .int(Int64(truncatingIfNeeded: 0 &- magnitude)) }
        }
        // The grammar is checked, so the standard library's conversion sees only plain decimals.
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw JSONParseError("number out of range", at: start) }
        return .double(value)
    }

    // MARK: Strings

    /// Parses the string whose opening quote is at `index`.
    mutating func parseString() throws(JSONParseError) -> String {
        let start = index + 1
        var i = start
        // Fast path: no escapes, so the string is a slice of the input once validated.
        while i < end {
            let byte = base[i]
            if byte == ASCII.quote {
                index = i + 1
                return String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self)
            }
            if byte == ASCII.backslash { return try parseEscapedString(from: start, firstEscape: i) }
            if byte < 0x80 {
                if byte < 0x20 { throw controlCharacter(byte, at: i) }
                i += 1
            } else {
                i = try skipMultibyteScalar(at: i)
            }
        }
        throw unterminatedString(openedAt: start - 1)
    }

    /// The slow path of `parseString`: bytes from `start` up to `firstEscape` are valid and plain.
    mutating func parseEscapedString(from start: Int, firstEscape: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = start
        var i = firstEscape
        while i < end {
            let byte = base[i]
            if byte == ASCII.quote {
                scratch.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: i - runStart))
                index = i + 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte == ASCII.backslash {
                scratch.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: i - runStart))
                i = try decodeEscape(at: i)
                runStart = i
            } else if byte < 0x80 {
                if byte < 0x20 { throw controlCharacter(byte, at: i) }
                i += 1
            } else {
                i = try skipMultibyteScalar(at: i)
            }
        }
        throw unterminatedString(openedAt: start - 1)
    }

    /// Appends what the escape at `i` (a backslash) stands for to `scratch`; returns the index
    /// after it.
    mutating func decodeEscape(at i: Int) throws(JSONParseError) -> Int {
        guard i + 1 < end else { throw endOfInput(at: i + 1, expecting: "an escape") }
        let decoded: UInt8
        switch base[i + 1] {
        case ASCII.quote: decoded = ASCII.quote
        case ASCII.backslash: decoded = ASCII.backslash
        case ASCII.slash: decoded = ASCII.slash
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = ASCII.lineFeed
        case UInt8(ascii: "r"): decoded = ASCII.carriageReturn
        case UInt8(ascii: "t"): decoded = ASCII.tab
        case ASCII.lowerU: return try decodeUnicodeEscape(at: i)
        case let byte:
            throw JSONParseError("invalid escape '\\' followed by \(describe(byte))", at: i)
        }
        scratch.append(decoded)
        return i + 2
    }

    /// Decodes `\uXXXX` at `i`, or a surrogate pair `\uD8xx\uDCxx`, into `scratch` as UTF-8.
    mutating func decodeUnicodeEscape(at i: Int) throws(JSONParseError) -> Int {
        let unit = try hexQuad(at: i + 2)
        var scalar = unit
        var next = i + 6
        switch unit {
        case 0xD800...0xDBFF:
            // A high surrogate: a low one must follow as another \u escape.
            guard next + 1 < end, base[next] == ASCII.backslash, base[next + 1] == ASCII.lowerU else {
                throw JSONParseError("lone surrogate \\u\(hex(unit)) in a string", at: i)
            }
            let low = try hexQuad(at: next + 2)
            guard (0xDC00...0xDFFF).contains(low) else {
                throw JSONParseError("lone surrogate \\u\(hex(unit)) in a string", at: i)
            }
            scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            next += 6
        case 0xDC00...0xDFFF:
            throw JSONParseError("lone surrogate \\u\(hex(unit)) in a string", at: i)
        default:
            break
        }
        appendUTF8(scalar)
        return next
    }

    /// The value of the four hex digits at `i`.
    func hexQuad(at i: Int) throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for j in i..<(i + 4) {
            guard j < end else { throw endOfInput(at: j, expecting: "a hex digit") }
            let byte = base[j]
            let digit: UInt8
            switch byte {
            case ASCII.zero...ASCII.nine: digit = byte &- ASCII.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
            default: throw JSONParseError("unexpected byte \(describe(byte)) where a hex digit should be", at: j)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Checks the UTF-8 sequence whose lead byte (0x80 or above) is at `i` (RFC 3629 §4: no
    /// overlong forms, no surrogates, nothing above U+10FFFF); returns the index after it.
    @inline(__always)
    func skipMultibyteScalar(at i: Int) throws(JSONParseError) -> Int {
        let lead = base[i]
        let length: Int
        var secondLow: UInt8 = 0x80
        var secondHigh: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondLow = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondHigh = 0x9F
        case 0xF0: length = 4; secondLow = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondHigh = 0x8F
        default: throw invalidUTF8(at: i)
        }
        guard i + length <= end else { throw invalidUTF8(at: i) }
        let second = base[i + 1]
        guard second >= secondLow && second <= secondHigh else { throw invalidUTF8(at: i) }
        if length >= 3 {
            guard base[i + 2] & 0xC0 == 0x80 else { throw invalidUTF8(at: i) }
            if length == 4 {
                guard base[i + 3] & 0xC0 == 0x80 else { throw invalidUTF8(at: i) }
            }
        }
        return i + length
    }

    // MARK: Errors and helpers

    func tooDeep() -> JSONParseError {
        JSONParseError("nesting deeper than \(maxDepth) levels", at: index)
    }

    func endOfInput(at offset: Int? = nil, expecting what: String) -> JSONParseError {
        JSONParseError("unexpected end of input where \(what) should be", at: offset ?? index)
    }

    func invalidUTF8(at offset: Int) -> JSONParseError {
        JSONParseError("invalid UTF-8 in a string", at: offset)
    }

    func controlCharacter(_ byte: UInt8, at offset: Int) -> JSONParseError {
        JSONParseError("unescaped control character \(describe(byte)) in a string", at: offset)
    }

    func unterminatedString(openedAt offset: Int) -> JSONParseError {
        JSONParseError("unterminated string (opened at byte \(offset))", at: end)
    }

    func duplicate(_ key: String, at offset: Int) -> JSONParseError {
        // Quoted the way the writer quotes, and cut short, since the key is untrusted.
        let shown = key.unicodeScalars.count > 40 ? String(key.unicodeScalars.prefix(40)) + "…" : key
        return JSONParseError("duplicate key \(JSONValue.string(shown).text)", at: offset)
    }
}

@inline(__always)
private func isDigit(_ byte: UInt8) -> Bool {
    byte &- ASCII.zero < 10
}

/// A byte for an error message: `'x'` when printable ASCII, `0x0A` otherwise.
private func describe(_ byte: UInt8) -> String {
    if byte > 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
    return "0x" + hex(UInt32(byte), digits: 2)
}

private func hex(_ value: UInt32, digits: Int = 4) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
}
