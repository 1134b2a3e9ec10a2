/// Walks a command line: options as `--name value` or `--name=value`, and plain words.
package struct ArgumentReader {
    package struct Argument {
        /// As given, e.g. `--tick=1s`.
        package let raw: String
        /// The option's name, e.g. `--tick`; the word itself for a plain word.
        package let name: String
        /// The part after `=` in `--name=value`.
        let inlineValue: String?
    }

    private var remaining: ArraySlice<String>

    package init(_ arguments: [String]) {
        remaining = arguments[...]
    }

    package mutating func next() -> Argument? {
        guard let raw = remaining.popFirst() else { return nil }
        guard raw.hasPrefix("--"), let equals = raw.firstIndex(of: "=") else {
            return Argument(raw: raw, name: raw, inlineValue: nil)
        }
        return Argument(raw: raw, name: String(raw[..<equals]), inlineValue: String(raw[raw.index(after: equals)...]))
    }

    /// The value of option `argument`: after its `=`, or the next argument.
    package mutating func value(of argument: Argument) throws(UsageError) -> String {
        if let inlineValue = argument.inlineValue { return inlineValue }
        guard let next = remaining.popFirst() else { throw UsageError("\(argument.name) needs a value") }
        return next
    }

    /// Everything not read yet (after `--`).
    package mutating func rest() -> [String] {
        defer { remaining = [] }
        return Array(remaining)
    }
}
