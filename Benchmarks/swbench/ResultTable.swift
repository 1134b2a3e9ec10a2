/// The figures as a Markdown table, for the terminal and for docs/PERFORMANCE.md.
enum ResultTable {
    static func text(_ figures: [Figure]) -> String {
        let header = ["figure", "value", "baseline", "ratio", "target", "met?"]
        let rows = figures.map(row)
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            "| " + zip(cells, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: " | ") + " |"
        }
        let rule = "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
    }

    private static func row(_ figure: Figure) -> [String] {
        let kind = figure.kind
        guard let value = figure.value else {
            return [kind.title, "not measured", "", "", kind.targetText, "no"]
        }
        let aside = figure.baselineAside.map { ", \($0)" } ?? ""
        let baseline = figure.baseline.map { "\(NumberText.string($0)) \(kind.unit) (\(kind.baselineName ?? "")\(aside))" } ?? "—"
        let ratio = figure.ratio.map { NumberText.fixed($0, decimals: 2) + "×" } ?? "—"
        return [kind.title, "\(NumberText.string(value)) \(kind.unit)", baseline, ratio, kind.targetText, met(figure)]
    }

    private static func met(_ figure: Figure) -> String {
        guard figure.isJudged else { return "—" }
        return figure.isMet ? "yes" : "NO"
    }
}
