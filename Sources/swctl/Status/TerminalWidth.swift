/// How many terminal cells a text takes, so that columns line up under names in CJK (two
/// cells a character), with emoji, or with combining accents (none): `list`, `log` and
/// `report` measure with it.
///
/// Close to `wcwidth`, without the C library's locale: per character (a cluster, as a
/// terminal draws it), two cells when any of its scalars is East Asian Wide or Fullwidth or
/// an emoji presented as one, none when all of them are zero-width (combining and enclosing
/// marks, format characters such as U+200B), one otherwise. A terminal may disagree on rare
/// characters; that costs a column's alignment, nothing else.
package enum TerminalWidth {
    package static func of(_ text: String) -> Int {
        var width = 0
        for character in text {
            if character.unicodeScalars.allSatisfy(isZeroWidth) { continue }
            width += character.unicodeScalars.contains(where: isWide) ? 2 : 1
        }
        return width
    }

    /// `text` in at most `width` cells: as it is when it fits, else cut after whole
    /// characters and ended with "…" (one cell). For a line redrawn in place (`watch` on a
    /// terminal), which must never wrap: each redraw would leave a line behind.
    package static func cut(_ text: String, to width: Int) -> String {
        guard of(text) > width else { return text }
        guard width > 0 else { return "" }
        var kept = ""
        var used = 0
        for character in text {
            let cells = of(String(character))
            guard used + cells <= width - 1 else { break }
            kept.append(character)
            used += cells
        }
        return kept + "…"
    }

    /// `text` followed by spaces up to `width` cells.
    package static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - of(text)))
    }

    private static func isZeroWidth(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: true
        default: false
        }
    }

    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isEmojiPresentation { return true }
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
            0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF,
            0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
