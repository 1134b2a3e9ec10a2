import Glibc

/// Environment variables: this process's, or a fixed set that tests pass.
package struct ProcessEnvironment: Sendable {
    private enum Source: Sendable {
        case process
        case fixed([String: String])
    }

    private let source: Source

    package init(_ values: [String: String]) {
        source = .fixed(values)
    }

    /// The variables of this process, each looked up when asked for: copying the whole
    /// environment into a dictionary was most of what a one-shot `swctl status` did
    /// (docs/PERFORMANCE.md).
    package static var current: ProcessEnvironment {
        ProcessEnvironment(source: .process)
    }

    private init(source: Source) {
        self.source = source
    }

    /// The value of `name`, treating an empty one as unset.
    package subscript(name: String) -> String? {
        let value: String?
        switch source {
        case .process:
            value = getenv(name).map { String(cString: $0) }
        case .fixed(let values):
            value = values[name]
        }
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    /// Every variable of this process, as the "NAME=value" strings a child is given, as they
    /// are when read (a later `unset` does not change what was read).
    package static var all: [String] {
        var variables: [String] = []
        let first: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        guard var entry = first else { return variables }
        while let variable = entry.pointee {
            variables.append(String(cString: variable))
            entry += 1
        }
        return variables
    }

    /// Removes `name` from this process's environment, so children do not inherit it.
    /// Only while the process has one thread: glibc's getenv is not safe against it.
    package static func unset(_ name: String) {
        unsetenv(name)
    }
}
