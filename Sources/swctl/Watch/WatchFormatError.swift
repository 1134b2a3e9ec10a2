/// A `--format` argument that cannot be used; `description` says what to write instead.
package struct WatchFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    package let description: String

    init(_ description: String) {
        self.description = description
    }

    static func unknownFormat(_ argument: String) -> WatchFormatError {
        WatchFormatError(
            "unknown format '\(argument)'; use plain, json, waybar, i3blocks, polybar"
                + " or a template like '{name} {elapsed} {state}'"
        )
    }

    static func unknownPlaceholder(_ name: String) -> WatchFormatError {
        WatchFormatError(
            "unknown placeholder {\(name)} in the format; use \(placeholderList)"
        )
    }

    static func unclosedPlaceholder(_ partial: String) -> WatchFormatError {
        WatchFormatError(
            "unclosed placeholder {\(partial) in the format; close it with } or write {{ for a literal {"
        )
    }

    static let unmatchedClosingBrace = WatchFormatError(
        "unmatched } in the format; write }} for a literal }"
    )

    private static let placeholderList = WatchTemplate.Placeholder.allCases
        .map { "{\($0.rawValue)}" }
        .joined(separator: ", ")
}
