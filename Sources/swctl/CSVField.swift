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
}
