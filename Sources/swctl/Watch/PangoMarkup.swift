/// Text made safe for Pango markup, which Waybar renders in a custom module's text and
/// tooltip (unless its `escape` option is set): a name such as `R&D <fast>` must show as
/// written, not as a markup error or a tag. The five entities of `g_markup_escape_text`.
enum PangoMarkup {
    static func escaped(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
