@testable import StopwatchdClient
import Testing

/// The names of a History stream, numbered once each and found again by their bytes.
@Suite("Name table")
struct NameTableTests {
    @Test("each name once, numbered in the order it came; found again by its bytes, past many growths")
    func numbering() {
        var table = NameTable()
        let names = (0..<1_000).map { "project \($0)" } + ["", "café", "cafe\u{301}", "tea"]
        var numbers: [Int32] = []
        for name in names { numbers.append(table.number(of: name)) }
        #expect(numbers == (0..<Int32(names.count)).map { $0 })
        // Composed and decomposed "café" are two names: compared by bytes, as StopwatchKey does.
        #expect(numbers[1_001] != numbers[1_002])
        for (name, number) in zip(names, numbers).reversed() {
            #expect(table.number(of: name) == number)
            let byBytes = Array(name.utf8).withUnsafeBytes { table.number(of: $0) }
            #expect(byBytes == number)
        }
        #expect(table.names == names)
    }

    @Test("bytes that are not UTF-8 are no name, and leave the table as it was")
    func invalidUTF8() {
        var table = NameTable()
        _ = table.number(of: "tea")
        let number = [UInt8(ascii: "t"), 0xFF].withUnsafeBytes { table.number(of: $0) }
        #expect(number == nil)
        #expect(table.names == ["tea"])
        #expect(table.number(of: "tea") == 0)
    }
}
