import LinuxSystem
@testable import StopwatchDaemon
import StopwatchProtocol
import Testing

/// File names of stopwatches: reversible, ASCII, within NAME_MAX, and those of the first
/// protocol's names unchanged.
@Suite("persistence: file names")
struct StopwatchFileNameTests {
    static let nameMax = 255

    @Test("names round trip", arguments: [
        "default", "tea.break_1-x", "client call", "100%", "a%41", "~tilde", "é~", ".hidden", "..x", "...",
        "a\\b \"q\" <&> {elapsed} %{F#f00}", "café", "cafe\u{301}", "タイマー", "😀", "mid\u{A0}dle",
        String(repeating: "x", count: 64),
    ])
    func roundTrip(name: String) throws {
        #expect(StopwatchName.isValid(name))
        let file = StopwatchFileName.of(name)
        #expect(file.utf8.allSatisfy { $0 < 0x80 && $0 > 0x20 && $0 != UInt8(ascii: "/") })
        #expect(!file.hasPrefix("."))
        #expect(!StopwatchFileName.isTemporary(file))
        let decoded = try #require(StopwatchFileName.stopwatchName(of: file))
        #expect(decoded.utf8.elementsEqual(name.utf8))
        #expect(StopwatchFileName.isStopwatchFile(file))
        #expect(StopwatchFileName.isTemporary(StopwatchFileName.temporary(of: name)))
    }

    @Test("the first protocol's names keep their file names")
    func oldNamesUnchanged() {
        for name in ["tea.break_1-x", "A9._-x", "default", "0", String(repeating: "Z", count: 64)] {
            #expect(StopwatchFileName.of(name) == "\(name).json")
            #expect(StopwatchFileName.temporary(of: name) == ".\(name).json.tmp")
        }
    }

    @Test("what is encoded, and how")
    func encoding() {
        #expect(StopwatchFileName.of("client call") == "client%20call.json")
        #expect(StopwatchFileName.of(".hidden") == "%2Ehidden.json")
        #expect(StopwatchFileName.of("a.b") == "a.b.json")
        #expect(StopwatchFileName.of("100%") == "100%25.json")
        #expect(StopwatchFileName.of("café") == "caf%C3%A9.json")
        #expect(StopwatchFileName.of("cafe\u{301}") == "cafe%CC%81.json")
    }

    @Test("NFC and NFD spellings are two files, and two keys")
    func normalization() {
        #expect(StopwatchFileName.of("café") != StopwatchFileName.of("cafe\u{301}"))
        #expect("café" == "cafe\u{301}")  // what Swift's String says, and why keys are needed
        #expect(StopwatchKey("café") != StopwatchKey("cafe\u{301}"))
        #expect(Set([StopwatchKey("café"), StopwatchKey("cafe\u{301}")]).count == 2)
        #expect(StopwatchKey("cafe\u{301}") < StopwatchKey("café"))
        #expect(StopwatchKey("B") < StopwatchKey("a"))
        #expect(StopwatchKey("a") == StopwatchKey("a"))
    }

    @Test("keys sort by their UTF-8 bytes: a prefix first, a byte above 0x7F after ASCII, never a key before itself; as the bytes compared one by one")
    func byteOrder() {
        let names = ["tea", "teas", "te", "z", "é", "Z", "", "a\u{0}", "a", "😀", "タ", "cafe\u{301}", "café"]
        let sorted = names.map(StopwatchKey.init).sorted().map(\.name)
        #expect(sorted == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(sorted.prefix(3) == ["", "Z", "a"])
        #expect(StopwatchKey("z") < StopwatchKey("é") && !(StopwatchKey("é") < StopwatchKey("z")))
        #expect(!(StopwatchKey("tea") < StopwatchKey("tea")))
        #expect(StopwatchKey("a") < StopwatchKey("a\u{0}"))
    }

    @Test("a long name's file name is cut and hashed, within NAME_MAX", arguments: [
        String(repeating: "😀", count: 64), String(repeating: "タ", count: 64), String(repeating: "é", count: 64),
        String(repeating: "x ", count: 31) + "xx", String(repeating: "x", count: 63) + "😀",
    ])
    func longNames(name: String) {
        #expect(StopwatchName.isValid(name))
        let file = StopwatchFileName.of(name)
        #expect(StopwatchFileName.temporary(of: name).utf8.count <= Self.nameMax)
        #expect("\(file).corrupt-20261124T064757Z-99".utf8.count <= Self.nameMax)
        #expect(StopwatchFileName.isStopwatchFile(file))
        #expect(file.utf8.count <= StopwatchFileName.maximumEncodedLength + ".json".utf8.count)
        // Only the record says the whole name; and a name one scalar different gets another file.
        if file.contains("~") {
            #expect(StopwatchFileName.stopwatchName(of: file) == nil)
            #expect(StopwatchFileName.of(String(name.unicodeScalars.dropLast())) != file)
        }
    }

    @Test("64 four-byte scalars: the hash is of the whole name")
    func hashed() {
        let name = String(repeating: "😀", count: 64)
        let other = String(repeating: "😀", count: 63) + "😁"
        let file = StopwatchFileName.of(name)
        #expect(file.contains("~"))
        #expect(file != StopwatchFileName.of(other))
        #expect(file == StopwatchFileName.of(name))
        #expect(StopwatchFileName.fnv1a("a".utf8) == 0xaf63_dc4c_8601_ec8c)
    }

    @Test("a cut name's file ends with the SHA-256 of the whole name, in 64 hex digits")
    func sha256Digest() {
        let name = String(repeating: "😀", count: 64)
        let digest = SHA256.digest(of: name.utf8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined()
        let file = StopwatchFileName.of(name)
        #expect(file.hasSuffix("~" + digest + ".json"))
        #expect(file.utf8.count <= StopwatchFileName.maximumEncodedLength + ".json".utf8.count)
        // An earlier release's name for it (FNV-1a, 16 digits) is a stopwatch file too.
        let legacy = StopwatchFileName.legacyOf(name)
        #expect(legacy?.hasSuffix("~" + String(StopwatchFileName.fnv1a(name.utf8), radix: 16, uppercase: true) + ".json") == true)
        #expect(legacy.map(StopwatchFileName.isStopwatchFile) == true)
        #expect(StopwatchFileName.legacyOf("short") == nil)
    }

    @Test("malformed or non-canonical file names are not stopwatch files", arguments: [
        "a%2.json", "a%.json", "%zz.json", "a%e9.json", "%41.json", "a b.json", "café.json", ".hidden.json", "%2E.json",
        "%2E%2E.json", "a%2Fb.json", "a%00b.json", "%C3.json", "%C0%AF.json", "%ED%A0%80.json", "x.json.tmp",
        "x.json.corrupt-20261124T064757Z", "x", ".json", "%20lead.json", "a~0123.json", "a~0123456789abcdef.json",
        "~0123456789ABCDEF.json", "%F0%9F~0123456789ABCDEF.json",
    ])
    func malformed(file: String) {
        #expect(StopwatchFileName.stopwatchName(of: file) == nil)
        #expect(!StopwatchFileName.isStopwatchFile(file))
    }

    @Test("decoding refuses malformed percent sequences")
    func decoding() {
        #expect(StopwatchFileName.decoded("a%20b".utf8) == Array("a b".utf8))
        #expect(StopwatchFileName.decoded("a%2".utf8) == nil)
        #expect(StopwatchFileName.decoded("a%".utf8) == nil)
        #expect(StopwatchFileName.decoded("%g0".utf8) == nil)
        #expect(StopwatchFileName.decoded("%a0".utf8) == nil)
        #expect(StopwatchFileName.decoded(".a".utf8) == nil)
        #expect(StopwatchFileName.decoded("a b".utf8) == nil)
    }
}
