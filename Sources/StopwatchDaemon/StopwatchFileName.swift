import StopwatchProtocol

/// How the files in `stopwatches/` are named: `<name>.json` holds stopwatch `name`, and
/// `.<name>.json.tmp` is its next content while it is being written (hidden, so that no
/// reader takes it for a stopwatch).
enum StopwatchFileName {
    static func of(_ name: String) -> String { "\(name).json" }

    static func temporary(of name: String) -> String { ".\(name).json.tmp" }

    /// Whether `file` is a temporary file: a leftover once no write is under way.
    static func isTemporary(_ file: String) -> Bool {
        file.hasPrefix(".") && file.hasSuffix(".tmp")
    }

    /// The stopwatch `file` is named for; nil for any other file (including those moved
    /// aside, `<name>.json.corrupt-…`).
    static func stopwatchName(of file: String) -> String? {
        guard file.hasSuffix(".json") else { return nil }
        let name = String(file.dropLast(".json".count))
        return StopwatchName.isValid(name) ? name : nil
    }
}
