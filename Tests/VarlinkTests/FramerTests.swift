import Testing
import Varlink

@Suite("framing")
struct FramerTests {
    private func feed(_ framer: inout VarlinkFramer, _ text: String) throws -> [String] {
        let bytes = Array(text.utf8)
        let messages = try bytes.withUnsafeBytes { try framer.append($0) }
        return messages.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The limit a refusal names, or nil when `body` was not refused.
    private func refusedLimit(_ body: () throws -> [String]) -> Int? {
        do {
            _ = try body()
            return nil
        } catch {
            return (error as? VarlinkFramer.MessageTooLarge)?.limit
        }
    }

    @Test("several messages in one read, in order, without their NULs")
    func severalInOneRead() throws {
        var framer = VarlinkFramer(maximumMessageSize: 100)
        #expect(try feed(&framer, "{\"a\":1}\0{}\0\0{\"b\":2}\0") == ["{\"a\":1}", "{}", "", "{\"b\":2}"])
        #expect(!framer.hasPartialMessage)
    }

    @Test("a message split over reads, byte by byte, comes out once, whole")
    func splitOverReads() throws {
        var framer = VarlinkFramer(maximumMessageSize: 100)
        var out: [String] = []
        for byte in "{\"method\":\"x\"}\0{\"n\"".utf8 {
            out += try feed(&framer, String(decoding: [byte], as: UTF8.self))
        }
        #expect(out == ["{\"method\":\"x\"}"])
        #expect(framer.hasPartialMessage)
        #expect(try feed(&framer, ":1}\0") == ["{\"n\":1}"])
        #expect(!framer.hasPartialMessage)
    }

    @Test("a read that ends a pending message and carries more: each message once, the rest pending")
    func endsPendingAndCarriesMore() throws {
        var framer = VarlinkFramer(maximumMessageSize: 100)
        #expect(try feed(&framer, "{\"a\"") == [])
        #expect(try feed(&framer, ":1}\0{}\0{\"b") == ["{\"a\":1}", "{}"])
        #expect(framer.hasPartialMessage)
        #expect(try feed(&framer, "\":2}\0") == ["{\"b\":2}"])
        #expect(!framer.hasPartialMessage)
    }

    @Test("an empty read changes nothing")
    func emptyRead() throws {
        var framer = VarlinkFramer(maximumMessageSize: 100)
        #expect(try feed(&framer, "{\"a\"") == [])
        let none = try framer.append(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(none.isEmpty)
        #expect(try feed(&framer, ":1}\0") == ["{\"a\":1}"])
    }

    @Test("a message of exactly the limit passes; one byte more is refused, whole or in parts")
    func limit() throws {
        var framer = VarlinkFramer(maximumMessageSize: 8)
        #expect(try feed(&framer, "12345678\0") == ["12345678"])
        #expect(refusedLimit { try feed(&framer, "123456789\0") } == 8)

        var split = VarlinkFramer(maximumMessageSize: 8)
        #expect(try feed(&split, "12345") == [])
        #expect(refusedLimit { try feed(&split, "6789\0") } == 8)

        var unended = VarlinkFramer(maximumMessageSize: 8)
        #expect(try feed(&unended, "1234\0" + "12345678") == ["1234"])
        #expect(refusedLimit { try feed(&unended, "9") } == 8)
    }
}
