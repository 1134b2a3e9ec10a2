/// A CSV field as RFC 4180 writes it: quoted when it holds a comma, a quote, CR or LF, with
/// its quotes doubled; as is otherwise.
package enum CSVField {
    package static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 13 || $0 == 10 })
        else { return text }
        var quoted = "\""
        for character in text.unicodeScalars {
            if character == "\"" { quoted += "\"" }
            quoted.unicodeScalars.append(character)
        }
        return quoted + "\""
    }

    package static func row(_ fields: [String]) -> String {
        fields.map(escaped).joined(separator: ",")
    }

    /// Text a user chose (a stopwatch's name), made safe for a spreadsheet, as OWASP's "CSV
    /// injection" advice has it: a field that begins with `=`, `+`, `-`, `@`, a tab or a CR
    /// would be taken for a formula (`=HYPERLINK(…)`, `=cmd|…`) by Excel, LibreOffice or
    /// Google Sheets, so it gets a `'` in front, which they read as "text". `row` then quotes
    /// it as any field. Only for text from users: the times and numbers swctl writes itself
    /// are never formulas, and stay exact for scripts.
    package static func neutralised(_ text: String) -> String {
        guard let first = text.utf8.first, formulaStarts.contains(first) else { return text }
        return "'" + text
    }

    private static let formulaStarts: Set<UInt8> = [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 9, 13]
}
