import StopwatchProtocol

/// A `--format` template such as `'{name} {elapsed} {state}'`, parsed once so that each
/// update only substitutes values.
///
/// Placeholders: `{name}`, `{state}` (the wire word: stopped, counting, pause), `{elapsed}`
/// (`H:MM:SS[.t]`), `{elapsed_ms}`, `{laps}` (how many), `{last_lap}` (`H:MM:SS[.t]`, empty
/// when there is none), `{remaining}` (a countdown's time left, `+H:MM:SS` in overtime) and
/// `{target}` (its length), both empty for a plain stopwatch, `{note}` (the note of the
/// interval counting, empty without one), and a cycle's `{phase}` (its label) and `{round}`
/// (`2/4`, `2` without end), both empty without a cycle. `{{` and `}}` stand for
/// literal braces.
package struct WatchTemplate: Equatable, Sendable {
    enum Placeholder: String, CaseIterable, Sendable {
        case name, state, elapsed
        case elapsedMs = "elapsed_ms"
        case laps
        case lastLap = "last_lap"
        case remaining, target, note
        /// A cycle's phase label and round (`2/4`, `2` without end); empty without a cycle.
        case phase, round
    }

    enum Piece: Equatable, Sendable {
        case literal(String)
        case placeholder(Placeholder)
    }

    let pieces: [Piece]

    package init(_ text: String) throws(WatchFormatError) {
        var pieces: [Piece] = []
        var literal = ""
        var characters = text[...]
        while let character = characters.popFirst() {
            switch character {
            case "{" where characters.first == "{":
                characters.removeFirst()
                literal.append("{")
            case "}" where characters.first == "}":
                characters.removeFirst()
                literal.append("}")
            case "{":
                // A `{` before the `}` means this one was left open: `{name {elapsed}`.
                guard let close = characters.firstIndex(where: { $0 == "{" || $0 == "}" }), characters[close] == "}"
                else {
                    throw .unclosedPlaceholder(String(characters.prefix { $0 != "{" }))
                }
                let name = String(characters[..<close])
                guard let placeholder = Placeholder(rawValue: name) else { throw .unknownPlaceholder(name) }
                characters = characters[characters.index(after: close)...]
                if !literal.isEmpty { pieces.append(.literal(literal)) }
                literal = ""
                pieces.append(.placeholder(placeholder))
            case "}":
                // A lone `}` is more likely a typo than meant literally; say so rather than guess.
                throw .unmatchedClosingBrace
            default:
                literal.append(character)
            }
        }
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        self.pieces = pieces
    }

    package func render(_ stopwatch: Stopwatch, tenths: Bool) -> String {
        render { placeholder in
            switch placeholder {
            case .name: stopwatch.name
            case .state: stopwatch.state.rawValue
            case .elapsed: ElapsedText.string(milliseconds: stopwatch.elapsedMs, tenths: tenths)
            case .elapsedMs: String(stopwatch.elapsedMs)
            case .laps: String(stopwatch.lapsMs.count)
            case .lastLap: stopwatch.lapsMs.last.map { ElapsedText.string(milliseconds: $0, tenths: tenths) } ?? ""
            case .remaining: RemainingText.string(for: stopwatch, tenths: tenths) ?? ""
            case .target: RemainingText.target(of: stopwatch, tenths: tenths) ?? ""
            case .note: stopwatch.note ?? ""
            case .phase: stopwatch.cycle.map { $0.currentLabel ?? "?" } ?? ""
            case .round: stopwatch.cycle.map(CycleText.round) ?? ""
            }
        }
    }

    /// The template with each placeholder replaced by `value(placeholder)`.
    func render(_ value: (Placeholder) -> String) -> String {
        var text = ""
        for piece in pieces {
            switch piece {
            case .literal(let literal): text += literal
            case .placeholder(let placeholder): text += value(placeholder)
            }
        }
        return text
    }
}
