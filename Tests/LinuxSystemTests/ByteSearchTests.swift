import LinuxSystem
import Testing

/// `memchr` behind `ByteSearch`: the same index as `firstIndex(of:)`, from any start.
@Suite("byte search")
struct ByteSearchTests {
    @Test("first index from a start, at the ends, absent, out of range")
    func firstIndex() {
        let bytes: [UInt8] = Array("ab\ncd\n\nx".utf8)
        bytes.withUnsafeBytes { buffer in
            for start in 0...bytes.count + 1 {
                let expected = start < bytes.count ? bytes[start...].firstIndex(of: 10) : nil
                #expect(ByteSearch.firstIndex(of: 10, in: buffer, from: start) == expected, "from \(start)")
            }
            #expect(ByteSearch.firstIndex(of: UInt8(ascii: "x"), in: buffer, from: 0) == bytes.count - 1)
            #expect(ByteSearch.firstIndex(of: UInt8(ascii: "z"), in: buffer, from: 0) == nil)
            #expect(ByteSearch.firstIndex(of: 10, in: buffer, from: -1) == nil)
        }
        #expect([UInt8]().withUnsafeBytes { ByteSearch.firstIndex(of: 0, in: $0, from: 0) } == nil)
    }
}
