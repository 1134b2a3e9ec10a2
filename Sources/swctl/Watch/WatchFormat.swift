import StopwatchProtocol
import Varlink

/// How `swctl watch` prints each update (`--format`).
package enum WatchFormat: Equatable, Sendable {
    /// `default counting 0:01:23 (3 laps)`, as `status` prints it.
    case plain
    /// The `Stopwatch` object as the daemon sends it.
    case json
    /// A waybar custom module line: `{"text":…,"tooltip":…,"class":…}`, class = wire state,
    /// or `expired` for a countdown that has reached its target; for a cycle, that and the
    /// phase's label (`["counting","focus"]`), and the text ends with the label. Text and tooltip are Pango
    /// markup (Waybar renders it), so the name in the tooltip is escaped (`PangoMarkup`).
    case waybar
    /// The elapsed time (a countdown's remaining time), then the state unless counting: for
    /// bars that take plain lines.
    case i3blocks, polybar
    case template(WatchTemplate)

    /// Shown where the time would be while the daemon cannot be reached.
    static let noElapsed = "--:--:--"

    /// A format by name, or a template when the argument holds a `{`. A template's values,
    /// `{name}` included, are put in as they are: it cannot know which bar reads it.
    package init(argument: String) throws(WatchFormatError) {
        switch argument {
        case "plain": self = .plain
        case "json": self = .json
        case "waybar": self = .waybar
        case "i3blocks": self = .i3blocks
        case "polybar": self = .polybar
        case _ where argument.contains("{"): self = .template(try WatchTemplate(argument))
        default: throw .unknownFormat(argument)
        }
    }

    /// The line for one update, without a newline.
    package func line(for stopwatch: Stopwatch, tenths: Bool) -> String {
        let tenths = tenths || RemainingText.needsTenths(stopwatch)
        let elapsed = ElapsedText.string(milliseconds: stopwatch.elapsedMs, tenths: tenths)
        // What a bar shows: for a countdown the time left (or `+overtime`), as a kitchen timer.
        let shown = RemainingText.string(for: stopwatch, tenths: tenths) ?? elapsed
        switch self {
        case .plain:
            return StatusText.summary(of: stopwatch, tenths: tenths)
        case .json:
            return stopwatch.json.text
        case .waybar:
            var tooltip = "\(stopwatch.name): \(StatusText.stateWord(stopwatch.state)) at \(elapsed)"
            if let target = RemainingText.target(of: stopwatch, tenths: tenths) {
                tooltip += ", target \(target)"
            }
            if !stopwatch.lapsMs.isEmpty {
                tooltip += ", \(StatusText.lapCount(stopwatch.lapsMs.count))"
            }
            if let position = CycleText.position(of: stopwatch) { tooltip += ", \(position)" }
            if let note = stopwatch.note { tooltip += "\n\(note)" }
            // `expired` from the expiry on, while it counts past the target and also when
            // paused there: the bar keeps saying the time is up until it is reset or restarted.
            let className = stopwatch.hasReachedTarget ? "expired" : stopwatch.state.rawValue
            // A cycle's text says its phase (`0:24:59 focus`), and its class gains the label,
            // so that CSS can colour focus and break apart (`#custom-pomo.break`).
            guard let cycle = stopwatch.cycle else {
                return Self.waybarLine(text: shown, tooltip: PangoMarkup.escaped(tooltip), class: .string(className))
            }
            let label = cycle.currentLabel ?? "?"
            return Self.waybarLine(
                text: "\(shown) \(PangoMarkup.escaped(label))", tooltip: PangoMarkup.escaped(tooltip),
                class: .array([.string(className), .string(Self.cssClass(label))])
            )
        case .i3blocks, .polybar:
            // Status bars have little room and may not render non-ASCII: no name, ASCII only.
            // That also keeps out of the line what the bar would read as markup (a name's
            // `%{` is a polybar tag, its `<` Pango in i3blocks' `markup=pango`).
            return stopwatch.state == .counting ? shown : "\(shown) \(StatusText.stateWord(stopwatch.state))"
        case .template(let template):
            return template.render(stopwatch, tenths: tenths)
        }
    }

    /// What `watch` prints while the daemon of stopwatch `name` cannot be reached, and why.
    package func unavailableLine(name: String, reason: String) -> String {
        let message = "stopwatchd unavailable: \(reason)"
        switch self {
        case .plain:
            return message
        case .json:
            return JSONValue.object(["error": .string("unavailable"), "reason": .string(reason)]).text
        case .waybar:
            return Self.waybarLine(text: Self.noElapsed, tooltip: PangoMarkup.escaped(message), class: .string("unavailable"))
        case .i3blocks, .polybar:
            return Self.noElapsed
        case .template(let template):
            return template.render { placeholder in
                switch placeholder {
                case .name: name
                case .state: "unavailable"
                case .elapsed: Self.noElapsed
                case .elapsedMs, .laps, .lastLap, .remaining, .target, .note, .phase, .round: ""
                }
            }
        }
    }

    /// A phase's label as a CSS class a selector can name: letters, digits, `-` and `_`
    /// kept, anything else (a space, `.`, `:`, `#`) as `-`: `long break` is `long-break`.
    static func cssClass(_ label: String) -> String {
        String(label.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "-" })
    }

    /// `className`: a string, or for a cycle an array (Waybar takes either).
    private static func waybarLine(text: String, tooltip: String, class className: JSONValue) -> String {
        JSONValue.object([
            "text": .string(text),
            "tooltip": .string(tooltip),
            "class": className,
        ]).text
    }
}
