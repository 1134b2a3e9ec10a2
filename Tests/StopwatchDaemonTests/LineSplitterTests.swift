@testable import StopwatchDaemon
import Testing

/// `LineSplitter`: the lines of a month file whatever the chunks it is read in, a line over
/// `HistoryStream.maximumLineLength` passed over whole wherever the chunks cut it.
@Suite("line splitter")
struct LineSplitterTests {
    /// Splits `bytes` fed in chunks of `chunk` bytes: the lines with where they begin, how
    /// many were passed over, the last line without a newline, and the end of the last
    /// whole one.
    static func split(_ bytes: [UInt8], chunk: Int, from: Int64 = 0)
        -> (lines: [(String, Int64)], long: Int, last: String?, wholeEnd: Int64)
    {
        var splitter = LineSplitter(from: from)
        var lines: [(String, Int64)] = []
        var long = 0
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            bytes[offset..<end].withUnsafeBytes { raw in
                splitter.feed(raw, at: from + Int64(offset), longLine: { long += 1 }) { line, start in
                    lines.append((String(decoding: line, as: UTF8.self), start))
                }
            }
            offset = end
        }
        return (lines, long, splitter.lastLine.map { String(decoding: $0.bytes, as: UTF8.self) }, splitter.wholeEnd)
    }

    @Test("lines and where they begin are the same whatever the chunks; a last line without a newline is kept apart")
    func chunksDoNotMatter() {
        let text = Array("one\ntwo\n\nthree\nfour".utf8)
        for chunk in [1, 2, 3, 5, 64] {
            let split = Self.split(text, chunk: chunk, from: 100)
            #expect(split.lines.map(\.0) == ["one", "two", "", "three"], "chunk \(chunk)")
            #expect(split.lines.map(\.1) == [100, 104, 108, 109], "chunk \(chunk)")
            #expect(split.last == "four" && split.long == 0 && split.wholeEnd == 115, "chunk \(chunk)")
        }
    }

    @Test("a line longer than the limit is passed over whole, wherever the chunks cut it; the lines around it stay")
    func longLinePassedOver() {
        let limit = HistoryStream.maximumLineLength
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: limit + 1)
        let exact = [UInt8](repeating: UInt8(ascii: "y"), count: limit)
        let text = Array("a\n".utf8) + long + [10] + exact + [10] + Array("b\n".utf8) + long
        for chunk in [limit / 3, limit - 1, limit, 4096] {
            let split = Self.split(text, chunk: chunk)
            #expect(split.lines.map(\.0.count) == [1, limit, 1], "chunk \(chunk)")
            #expect(split.lines.last?.0 == "b", "chunk \(chunk)")
            #expect(split.long == 1, "chunk \(chunk)")
            // The long last line, without its newline yet: not kept, not counted.
            #expect(split.last == nil, "chunk \(chunk)")
            #expect(split.wholeEnd == Int64(text.count - long.count), "chunk \(chunk)")
        }
    }

    @Test("no newline at all: no line, the whole end where reading began")
    func noNewline() {
        let split = Self.split(Array("partial".utf8), chunk: 3, from: 7)
        #expect(split.lines.isEmpty && split.last == "partial" && split.wholeEnd == 7)
    }
}
