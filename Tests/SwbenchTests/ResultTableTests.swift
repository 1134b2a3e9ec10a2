import Testing

@testable import swbench

/// The table's verdict column: a figure with a target says whether it met it; a figure only
/// reported beside the others (issue 30's unpinned round trip, CPU per Get) says neither.
struct ResultTableTests {
    private func lastRow(_ figure: Figure) -> [String] {
        let line = ResultTable.text([figure]).split(separator: "\n").last ?? ""
        return line.split(separator: "|").map { cell in String(cell.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
    }

    @Test func aReportedFigureIsNeitherMetNorMissed() {
        let row = lastRow(Figure(.getRoundTripUnpinned, value: 80, baseline: 5))
        #expect(row.last == "—")
        #expect(row.contains("(reported)"))
        #expect(row.contains("16.00×"))
    }

    @Test func aFigureWithATargetSaysWhetherItMetIt() {
        #expect(lastRow(Figure(.getRoundTrip, value: 6, baseline: 5)).last == "yes")
        #expect(lastRow(Figure(.getRoundTrip, value: 7, baseline: 5)).last == "NO")
        #expect(lastRow(Figure(.expirySwitches, value: 5.5, baseline: 3.6)).last == "yes")
        #expect(lastRow(Figure(.expirySwitches, value: 5.7, baseline: 3.6)).last == "NO")
        #expect(lastRow(Figure(.getCPU, failure: "no cc")).contains("not measured"))
    }
}
