import Glibc

/// Environment variables, read once; tests pass their own.
public struct ProcessEnvironment: Sendable {
    public var values: [String: String]

    public init(_ values: [String: String]) {
        self.values = values
    }

    /// The variables of this process now.
    public static var current: ProcessEnvironment {
        var values: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                values[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return ProcessEnvironment(values)
    }

    /// The value of `name`, treating an empty one as unset.
    public subscript(name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }

    /// Removes `name` from this process's environment, so children do not inherit it.
    public static func unset(_ name: String) {
        unsetenv(name)
    }
}
