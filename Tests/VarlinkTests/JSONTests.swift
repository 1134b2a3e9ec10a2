import Testing
import Varlink

/// The error `JSONParser` throws for `input`, or nil when it parses.
private func parseError(_ input: String, maxDepth: Int = 64) -> JSONParseError? {
    do {
        _ = try JSONParser.parse(input, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

private func parseError(_ input: [UInt8], maxDepth: Int = 64) -> JSONParseError? {
    do {
        _ = try JSONParser.parse(input, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

/// `prefix` and `suffix` as UTF-8 around raw `bytes`.
private func bytes(_ prefix: String, _ raw: [UInt8], _ suffix: String = "") -> [UInt8] {
    Array(prefix.utf8) + raw + Array(suffix.utf8)
}

@Suite("JSON parser")
struct JSONParserTests {
    // MARK: Valid input

    static let valid: [(String, JSONValue)] = [
        ("null", .null),
        ("true", .bool(true)),
        ("false", .bool(false)),
        ("0", .int(0)),
        ("-0", .int(0)),
        ("42", .int(42)),
        ("-42", .int(-42)),
        ("9223372036854775807", .int(.max)),
        ("-9223372036854775808", .int(.min)),
        ("9223372036854775808", .double(9_223_372_036_854_775_808.0)),
        ("-9223372036854775809", .double(-9_223_372_036_854_775_809.0)),
        ("18446744073709551616", .double(18_446_744_073_709_551_616.0)),
        ("1.5", .double(1.5)),
        ("-0.0", .double(-0.0)),
        ("0.1", .double(0.1)),
        ("-1.5e3", .double(-1500)),
        ("1E2", .double(100)),
        ("1e+2", .double(100)),
        ("25e-2", .double(0.25)),
        ("1e-400", .double(0)),
        ("1.7976931348623157e308", .double(.greatestFiniteMagnitude)),
        (#""""#, .string("")),
        (#""abc""#, .string("abc")),
        (#""\"\\\/\b\f\n\r\t""#, .string("\"\\/\u{8}\u{C}\n\r\t")),
        (#""\u0041\u00e9\u20AC""#, .string("Aé€")),
        (#""\ud83d\ude00""#, .string("😀")),
        (#""\uD83D\uDE00x""#, .string("😀x")),
        (#""a\u0000b""#, .string("a\u{0}b")),
        (#""\uFFFF""#, .string("\u{FFFF}")),
        ("\"héllo wörld 😀\"", .string("héllo wörld 😀")),
        ("[]", .array([])),
        ("{}", .object([:])),
        ("[1,\"a\",null,true,[],{}]", .array([.int(1), .string("a"), .null, .bool(true), .array([]), .object([:])])),
        (" \t\r\n[ 1 , 2 ]\n\r\t ", .array([.int(1), .int(2)])),
        (#"{ "b" : 1 , "a" : [ ] }"#, .object(["b": .int(1), "a": .array([])])),
        (
            #"{"method":"io.stopwatchd.Get","parameters":{"name":"default"}}"#,
            .object(["method": .string("io.stopwatchd.Get"), "parameters": .object(["name": .string("default")])])
        ),
        (#"{"a":{"a":1},"b":{"a":2}}"#, .object(["a": .object(["a": .int(1)]), "b": .object(["a": .int(2)])])),
    ]

    @Test("valid input parses to the exact value", arguments: valid)
    func parsesValid(_ input: String, _ expected: JSONValue) throws {
        let value = try JSONParser.parse(input)
        #expect(value == expected)
        // The byte-array entry point agrees.
        #expect(try JSONParser.parse(Array(input.utf8)) == expected)
    }

    @Test("-0.0 keeps its sign; -0 is the integer 0")
    func negativeZero() throws {
        guard case .double(let value) = try JSONParser.parse("-0.0") else {
            Issue.record("-0.0 is not a double")
            return
        }
        #expect(value == 0 && value.sign == .minus)
        #expect(try JSONParser.parse("-0") == .int(0))
    }

    @Test("object members keep their order")
    func memberOrder() throws {
        guard case .object(let object) = try JSONParser.parse(#"{"z":1,"a":2,"m":3}"#) else {
            Issue.record("not an object")
            return
        }
        #expect(object.keys == ["z", "a", "m"])
    }

    // MARK: Invalid input: (input, fragment of the reason, offset)

    static let invalid: [(String, String, Int)] = [
        ("", "empty input", 0),
        ("  \n\t", "empty input", 4),
        ("nul", "end of input", 3),
        ("nulL", "literal null", 3),
        ("tru e", "literal true", 3),
        ("True", "unexpected byte 'T'", 0),
        ("NaN", "unexpected byte 'N'", 0),
        ("Infinity", "unexpected byte 'I'", 0),
        ("-Infinity", "unexpected byte 'I'", 1),
        ("01", "leading zero", 0),
        ("-01", "leading zero", 1),
        ("00", "leading zero", 0),
        ("[01]", "leading zero", 1),
        ("+1", "unexpected byte '+'", 0),
        (".5", "unexpected byte '.'", 0),
        ("1.", "end of input", 2),
        ("1.e5", "follow '.'", 2),
        ("[1.]", "follow '.'", 3),
        ("1e", "end of input", 2),
        ("1e+", "end of input", 3),
        ("1e+x", "exponent digit", 3),
        ("-", "end of input", 1),
        ("- 1", "unexpected byte 0x20", 1),
        ("0x10", "after the value", 1),
        ("1 2", "after the value", 2),
        (#""a""b""#, "after the value", 3),
        ("[1]]", "after the value", 3),
        ("1e400", "number out of range", 0),
        ("-1e400", "number out of range", 0),
        ("[1e400]", "number out of range", 1),
        ("1" + String(repeating: "0", count: 400), "number out of range", 0),
        ("[1,]", "trailing comma", 3),
        (#"{"a":1,}"#, "trailing comma", 7),
        ("[,1]", "where a value should start", 1),
        ("[1,,2]", "where a value should start", 3),
        ("[1 2]", "where ',' or ']' should be", 3),
        ("[", "end of input", 1),
        ("[1", "end of input", 2),
        ("[1,", "end of input", 3),
        ("{", "end of input", 1),
        (#"{"a""#, "end of input", 4),
        (#"{"a":"#, "end of input", 5),
        (#"{"a":1"#, "end of input", 6),
        (#"{"a"}"#, "where ':' should be", 4),
        (#"{"a" 1}"#, "where ':' should be", 5),
        (#"{"a":}"#, "where a value should start", 5),
        ("{a:1}", "where a string key should be", 1),
        ("{'a':1}", "where a string key should be", 1),
        ("{,}", "where a string key should be", 1),
        ("{1:2}", "where a string key should be", 1),
        ("['a']", "unexpected byte '''", 1),
        (#"{"a":1 "b":2}"#, "where ',' or '}' should be", 7),
        (#"{"a":1,"a":2}"#, #"duplicate key "a""#, 7),
        (#"{"x":{"a":1,"b":2,"a":3}}"#, #"duplicate key "a""#, 18),
        (#""abc"#, "unterminated string", 4),
        ("\"a\nb\"", "unescaped control character 0x0A", 2),
        ("\"\t\"", "unescaped control character 0x09", 1),
        ("\"\\n\u{1F}\"", "unescaped control character 0x1F", 3),
        (#""\x""#, "invalid escape", 1),
        (#""\U0041""#, "invalid escape", 1),
        (#""\'""#, "invalid escape", 1),
        (#""\u12""#, "hex digit", 5),
        (#""\u12G4""#, "hex digit", 5),
        (#""\"#, "end of input", 2),
        (#""\uD800""#, "lone surrogate", 1),
        (#""\uDC00""#, "lone surrogate", 1),
        (#""a\uDBFFb""#, "lone surrogate", 2),
        (#""\uD800\u0041""#, "lone surrogate", 1),
        (#""\uD800\uD800""#, "lone surrogate", 1),
        (#""\uDE00\uD83D""#, "lone surrogate", 1),
        ("// comment\n1", "unexpected byte '/'", 0),
        ("/* comment */ 1", "unexpected byte '/'", 0),
        ("1 // comment", "after the value", 2),
        ("\u{0C}1", "unexpected byte 0x0C", 0),
        ("\u{A0}1", "unexpected byte 0xC2", 0),
        ("\u{FEFF}1", "unexpected byte 0xEF", 0),
        ("1\u{0B}", "after the value", 1),
    ]

    @Test("invalid input is refused with a reason and an offset", arguments: invalid)
    func refusesInvalid(_ input: String, _ fragment: String, _ offset: Int) {
        let error = parseError(input)
        #expect(error != nil)
        #expect(error?.reason.contains(fragment) == true, "reason: \(error?.reason ?? "none")")
        #expect(error?.offset == offset)
    }

    // MARK: Raw bytes: (input, fragment of the reason, offset)

    static let invalidBytes: [([UInt8], String, Int)] = [
        ([0x00], "unexpected byte 0x00", 0),
        (bytes("1", [0x00]), "after the value", 1),
        (bytes("[1,", [0x00], "]"), "unexpected byte 0x00", 3),
        (bytes("\"", [0x00], "\""), "control character 0x00", 1),
        (bytes("\"", [0xC3], "\""), "invalid UTF-8", 1),                       // truncated 2-byte
        (bytes("\"", [0xC3]), "invalid UTF-8", 1),                             // truncated at the end
        (bytes("\"a", [0xE2, 0x82], "\""), "invalid UTF-8", 2),                // truncated 3-byte
        (bytes("\"", [0xF0, 0x9F, 0x98], "\""), "invalid UTF-8", 1),           // truncated 4-byte
        (bytes("\"", [0x80], "\""), "invalid UTF-8", 1),                       // lone continuation
        (bytes("\"", [0xBF], "\""), "invalid UTF-8", 1),
        (bytes("\"", [0xC0, 0xAF], "\""), "invalid UTF-8", 1),                 // overlong '/'
        (bytes("\"", [0xC1, 0xBF], "\""), "invalid UTF-8", 1),                 // overlong
        (bytes("\"", [0xE0, 0x80, 0xAF], "\""), "invalid UTF-8", 1),           // overlong, 3 bytes
        (bytes("\"", [0xE0, 0x9F, 0xBF], "\""), "invalid UTF-8", 1),           // overlong U+07FF
        (bytes("\"", [0xF0, 0x80, 0x80, 0xAF], "\""), "invalid UTF-8", 1),     // overlong, 4 bytes
        (bytes("\"", [0xF0, 0x8F, 0xBF, 0xBF], "\""), "invalid UTF-8", 1),     // overlong U+FFFF
        (bytes("\"", [0xED, 0xA0, 0x80], "\""), "invalid UTF-8", 1),           // U+D800 in UTF-8
        (bytes("\"", [0xED, 0xBF, 0xBF], "\""), "invalid UTF-8", 1),           // U+DFFF in UTF-8
        (bytes("\"", [0xF4, 0x90, 0x80, 0x80], "\""), "invalid UTF-8", 1),     // U+110000
        (bytes("\"", [0xF5, 0x80, 0x80, 0x80], "\""), "invalid UTF-8", 1),
        (bytes("\"", [0xF8, 0x88, 0x80, 0x80, 0x80], "\""), "invalid UTF-8", 1),
        (bytes("\"", [0xFE], "\""), "invalid UTF-8", 1),
        (bytes("\"", [0xFF], "\""), "invalid UTF-8", 1),
        (bytes("\"", [0xC3, 0x41], "\""), "invalid UTF-8", 1),                 // bad continuation
        (bytes("\"", [0xE2, 0x82, 0x41], "\""), "invalid UTF-8", 1),
        (bytes("\"", [0xF0, 0x9F, 0x98, 0x41], "\""), "invalid UTF-8", 1),
        (bytes("\"\\n", [0xC3], "\""), "invalid UTF-8", 3),                    // after an escape
        (bytes("{\"", [0xFF], "\":1}"), "invalid UTF-8", 2),                   // in a key
        ([0xC3, 0xA9], "unexpected byte 0xC3", 0),                             // outside a string
    ]

    @Test("malformed UTF-8 and raw NUL bytes are refused", arguments: invalidBytes)
    func refusesInvalidBytes(_ input: [UInt8], _ fragment: String, _ offset: Int) {
        let error = parseError(input)
        #expect(error != nil)
        #expect(error?.reason.contains(fragment) == true, "reason: \(error?.reason ?? "none")")
        #expect(error?.offset == offset)
    }

    static let validUTF8: [([UInt8], String)] = [
        ([0xC2, 0x80], "\u{80}"),
        ([0xDF, 0xBF], "\u{7FF}"),
        ([0xE0, 0xA0, 0x80], "\u{800}"),
        ([0xED, 0x9F, 0xBF], "\u{D7FF}"),
        ([0xEE, 0x80, 0x80], "\u{E000}"),
        ([0xEF, 0xBF, 0xBF], "\u{FFFF}"),
        ([0xF0, 0x90, 0x80, 0x80], "\u{10000}"),
        ([0xF0, 0x9F, 0x98, 0x80], "😀"),
        ([0xF4, 0x8F, 0xBF, 0xBF], "\u{10FFFF}"),
        ([0xE2, 0x82, 0xAC], "€"),
    ]

    @Test("UTF-8 at the edges of each range is accepted", arguments: validUTF8)
    func acceptsValidUTF8(_ raw: [UInt8], _ expected: String) throws {
        #expect(try JSONParser.parse(bytes("\"", raw, "\"")) == .string(expected))
        #expect(try JSONParser.parse(bytes("\"\\t", raw, "\"")) == .string("\t" + expected))
    }

    // MARK: Strings

    @Test("strings mixing plain runs, escapes and non-ASCII decode to the exact bytes")
    func mixedString() throws {
        let value = try JSONParser.parse(#""ab\ncd\u00e9f\u00E9\ud83d\ude00g😀 e\u0301\/""#)
        guard case .string(let string) = value else {
            Issue.record("not a string")
            return
        }
        // Compare bytes: String equality would accept any canonically equivalent spelling.
        #expect(Array(string.utf8) == Array("ab\ncd\u{E9}f\u{E9}😀g😀 e\u{301}/".utf8))
    }

    @Test("\\u0000 yields a string holding U+0000")
    func escapedNul() throws {
        guard case .string(let string) = try JSONParser.parse(#""\u0000""#) else {
            Issue.record("not a string")
            return
        }
        #expect(Array(string.utf8) == [0])
    }

    @Test("a key with escapes parses and keeps its text")
    func escapedKey() throws {
        let value = try JSONParser.parse(#"{"a\"b":1,"\u00e9":2}"#)
        #expect(value == .object(["a\"b": .int(1), "é": .int(2)]))
    }

    // MARK: Numbers

    @Test("integers beyond Int64 become doubles; past Double's range they are refused")
    func hugeNumbers() throws {
        let digits300 = "1" + String(repeating: "0", count: 300)
        #expect(try JSONParser.parse(digits300) == .double(1e300))
        #expect(try JSONParser.parse("-" + digits300) == .double(-1e300))
        #expect(try JSONParser.parse("99999999999999999999") == .double(1e20))
        #expect(parseError("1e400")?.reason == "number out of range")
        #expect(parseError("1.8e308")?.reason == "number out of range")
    }

    // MARK: Objects

    @Test("a repeated key is refused, however many members come before it")
    func duplicateKeys() {
        // Few members (scanned) and many (checked with a set).
        for count in [2, 12, 13, 50] {
            let members = (0..<count).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
            let input = "{" + members + ",\"k\(count / 2)\":0}"
            let error = parseError(input)
            #expect(error?.reason == "duplicate key \"k\(count / 2)\"", "\(count) members")
            #expect(error?.offset == members.utf8.count + 2)
        }
        // The same key in different objects is fine.
        #expect(parseError(#"[{"a":1},{"a":2}]"#) == nil)
    }

    @Test("keys that differ only in escaping or normalization count as the same key")
    func equivalentKeys() {
        #expect(parseError(#"{"é":1,"\u00e9":2}"#)?.reason.contains("duplicate key") == true)
        // NFC and NFD spellings: JSONObject's subscript could not tell them apart.
        #expect(parseError("{\"\u{E9}\":1,\"e\u{301}\":2}")?.reason.contains("duplicate key") == true)
    }

    @Test("a large object with distinct keys parses in order")
    func largeObject() throws {
        let count = 10_000
        let input = "{" + (0..<count).map { "\"key\($0)\":\($0)" }.joined(separator: ",") + "}"
        guard case .object(let object) = try JSONParser.parse(input) else {
            Issue.record("not an object")
            return
        }
        #expect(object.keys.count == count)
        #expect(object.keys.last == "key\(count - 1)")
        #expect(object["key1234"] == .int(1234))
    }

    @Test("the key in a duplicate-key reason is quoted and cut short")
    func longDuplicateKey() {
        let key = String(repeating: "x", count: 100) + "\n"
        let reason = parseError("{\"\(key.replacingNewline)\":1,\"\(key.replacingNewline)\":2}")?.reason
        #expect(reason == "duplicate key \"" + String(repeating: "x", count: 40) + "…\"")
        #expect(parseError(#"{"a\nb":1,"a\nb":2}"#)?.reason == #"duplicate key "a\nb""#)
    }

    // MARK: Depth

    @Test("100,000 nested arrays fail fast with a depth error")
    func deepArrays() {
        let input = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        let start = ContinuousClock.now
        let error = parseError(input)
        let elapsed = ContinuousClock.now - start
        #expect(error?.reason == "nesting deeper than 64 levels")
        #expect(error?.reason.contains("deeper") == true)
        #expect(error?.offset == 64)
        // Stopped at level 64, not after 100,000 (the offset says so); the bound is loose for
        // a sanitizer's run beside the other suites.
        #expect(elapsed < .seconds(1))
    }

    @Test("100,000 nested objects fail with a depth error")
    func deepObjects() {
        let input = String(repeating: #"{"a":"#, count: 100_000)
        let error = parseError(input)
        #expect(error?.reason == "nesting deeper than 64 levels")
        #expect(error?.offset == 64 * 5)
    }

    @Test("exactly maxDepth levels parse; one more fails")
    func depthLimit() throws {
        func nested(_ levels: Int) -> String {
            String(repeating: "[", count: levels) + "1" + String(repeating: "]", count: levels)
        }
        #expect(try JSONParser.parse(nested(64)) != .null)
        #expect(parseError(nested(65))?.reason == "nesting deeper than 64 levels")
        #expect(try JSONParser.parse(nested(3), maxDepth: 3) != .null)
        #expect(parseError(nested(4), maxDepth: 3)?.reason == "nesting deeper than 3 levels")
        #expect(parseError(#"{"a":[{}]}"#, maxDepth: 2)?.offset == 6)
        #expect(try JSONParser.parse(nested(300), maxDepth: 300) != .null)
        // maxDepth 0 allows scalars only.
        #expect(try JSONParser.parse("1", maxDepth: 0) == .int(1))
        #expect(parseError("[]", maxDepth: 0)?.reason == "nesting deeper than 0 levels")
    }

    // MARK: Errors

    @Test("the description is the reason and the byte offset")
    func errorDescription() {
        let error = parseError("[1,\n  x]")
        #expect(error?.offset == 6)
        #expect(error?.description == "unexpected byte 'x' where a value should start at byte 6")
        // Offsets count UTF-8 bytes, not characters.
        #expect(parseError("[\"éé\" x]")?.offset == 8)
    }

    @Test("the raw-buffer entry point parses a slice of a larger buffer")
    func rawBuffer() throws {
        let storage = Array("xx[1,2]yy".utf8)
        let value = try storage.withUnsafeBytes { raw in
            try JSONParser.parse(UnsafeRawBufferPointer(rebasing: raw[2..<7]))
        }
        #expect(value == .array([.int(1), .int(2)]))
        #expect(parseError([]) == parseError(""))
    }
}

@Suite("JSON round trips and writer")
struct JSONWriterTests {
    static let controlCharacters = (0..<0x20).map { String(Unicode.Scalar(UInt8($0))) } + ["\u{7F}"]

    static let values: [JSONValue] = [
        .null,
        .bool(true),
        .bool(false),
        .int(0),
        .int(-1),
        .int(.max),
        .int(.min),
        .double(1.5),
        .double(-0.0),
        .double(0.1),
        .double(100),
        .double(1e300),
        .double(-2.5e-300),
        .double(.leastNonzeroMagnitude),
        .double(.greatestFiniteMagnitude),
        .double(9_223_372_036_854_775_808.0),
        .string(""),
        .string("plain"),
        .string("quote \" backslash \\ slash /"),
        .string(controlCharacters.joined()),
        .string("héllo wörld € 😀 \u{10FFFF}"),
        .string("\u{0}"),
        .array([]),
        .array([.int(1), .string("two"), .null, .array([.bool(false)])]),
        .object([:]),
        .object(["z": .int(1), "a": .object(["nested": .array([.double(0.5)])]), "é": .string("ü")]),
    ]

    @Test("every kind of value survives serialized → parse", arguments: values)
    func roundTrip(_ value: JSONValue) throws {
        let parsed = try JSONParser.parse(value.serialized)
        #expect(parsed == value)
        // Serializing again gives the same bytes (this also catches normalization changes
        // that String equality would hide).
        #expect(parsed.serialized == value.serialized)
        #expect(try JSONParser.parse(value.text) == value)
    }

    static let integers: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, 1_000_000, 1_234_567_890_123, .max, .min, .max - 1, .min + 1]
        + (0..<19).map { power in (0..<power).reduce(Int64(1)) { product, _ in product * 10 } }
        + (1..<19).map { power in (0..<power).reduce(Int64(1)) { product, _ in product * 10 } - 1 }

    @Test("integers are written as String spells them", arguments: integers)
    func integerWriting(value: Int64) throws {
        #expect(JSONValue.int(value).serialized == Array(String(value).utf8))
        var bytes = Array("[".utf8)
        JSONValue.writeInteger(value, into: &bytes)
        #expect(bytes == Array("[\(value)".utf8))
    }

    @Test("control characters are escaped and re-parse to the same string", arguments: controlCharacters)
    func controlCharacterEscaped(_ string: String) throws {
        let bytes = JSONValue.string("a" + string + "b").serialized
        #expect(!bytes.contains { $0 < 0x20 || $0 == 0x7F })
        guard case .string(let parsed) = try JSONParser.parse(bytes) else {
            Issue.record("not a string")
            return
        }
        #expect(Array(parsed.utf8) == Array(("a" + string + "b").utf8))
    }

    @Test("non-ASCII text is written as UTF-8 and survives byte for byte")
    func nonASCII() throws {
        let text = "é e\u{301} 日本 😀"
        let bytes = JSONValue.string(text).serialized
        #expect(bytes == [UInt8(ascii: "\"")] + Array(text.utf8) + [UInt8(ascii: "\"")])
        guard case .string(let parsed) = try JSONParser.parse(bytes) else {
            Issue.record("not a string")
            return
        }
        #expect(Array(parsed.utf8) == Array(text.utf8))
    }

    @Test("integers are written as their exact decimal text")
    func integerText() {
        for value: Int64 in [0, 7, -7, 10, -10, 1_234_567_890, .max, .min, .max - 1, .min + 1] {
            #expect(JSONValue.int(value).text == String(value))
        }
    }

    @Test("escapes land between the plain runs around them, byte for byte")
    func escapeText() {
        #expect(JSONValue.string(#"a"b\c"#).text == #""a\"b\\c""#)
        #expect(JSONValue.string("\u{1}x\ny\u{7F}").text == #""\u0001x\ny\u007f""#)
        #expect(JSONValue.string("\"").text == #""\"""#)
        #expect(JSONValue.string("é\té").text == "\"é\\té\"")
    }

    @Test("a varlink call re-serializes to the bytes it came from")
    func varlinkCall() throws {
        let text = #"{"method":"io.stopwatchd.Get","parameters":{"name":"default"}}"#
        #expect(try JSONParser.parse(text).text == text)
    }
}

extension String {
    /// The string with each line feed written as the JSON escape `\n`.
    fileprivate var replacingNewline: String {
        var result = ""
        for character in self { result += character == "\n" ? "\\n" : String(character) }
        return result
    }
}
