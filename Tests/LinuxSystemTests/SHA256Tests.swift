import LinuxSystem
import Testing

/// SHA-256 against the examples of FIPS 180-2 (appendix B) and the empty message, whole and
/// fed in pieces that straddle the 64-byte blocks and the padding's boundary.
@Suite("SHA-256")
struct SHA256Tests {
    static func hex(_ digest: [UInt8]) -> String {
        digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    static let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    static let twoBlocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"

    @Test("the FIPS 180-2 examples and the empty message", arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", abc),
        (twoBlocks, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func examples(message: String, digest: String) {
        #expect(Self.hex(SHA256.digest(of: message.utf8)) == digest)
    }

    @Test("a million 'a' (FIPS 180-2, B.3)")
    func millionA() {
        #expect(Self.hex(SHA256.digest(of: repeatElement(UInt8(ascii: "a"), count: 1_000_000)))
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("fed in pieces: the same digest as at once, whatever the cuts")
    func pieces() {
        let message = Array(Self.twoBlocks.utf8) + Array(repeating: UInt8(ascii: "x"), count: 73)
        let whole = SHA256.digest(of: message)
        for cut in [0, 1, 55, 56, 63, 64, 65, 119, 120, message.count] {
            var hash = SHA256()
            hash.update(message[..<cut])
            hash.update(message[cut...])
            #expect(hash.finalize() == whole, "cut at \(cut)")
        }
        // The lengths where the padding needs a block of its own, or just fits.
        #expect(Self.hex(SHA256.digest(of: repeatElement(UInt8(ascii: "a"), count: 55)))
            == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(Self.hex(SHA256.digest(of: repeatElement(UInt8(ascii: "a"), count: 56)))
            == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(Self.hex(SHA256.digest(of: repeatElement(UInt8(ascii: "a"), count: 64)))
            == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }
}
