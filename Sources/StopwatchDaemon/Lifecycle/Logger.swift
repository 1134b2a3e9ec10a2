import LinuxSystem

/// Writes log lines to standard error. Under journald (`$JOURNAL_STREAM` set) each line
/// starts with its sd-daemon `<N>` priority so the journal files it at the right level;
/// elsewhere it starts with the level's name.
package struct Logger: Sendable {
    package var minimumLevel: LogLevel
    package var journald: Bool
    private let write: @Sendable (String) -> Void

    package init(minimumLevel: LogLevel = .info, journald: Bool, write: (@Sendable (String) -> Void)? = nil) {
        self.minimumLevel = minimumLevel
        self.journald = journald
        self.write = write ?? { line in
            try? FileDescriptor.standardError.writeAll(Array(line.utf8))
        }
    }

    package func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level >= minimumLevel else { return }
        let text = message().replacingNewlines()
        write(journald ? "<\(level.priority)>\(text)\n" : "stopwatchd: \(level.rawValue): \(text)\n")
    }

    package func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    package func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    package func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    package func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    package func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}

extension String {
    /// One log line per message: a newline inside would start a line with no priority.
    fileprivate func replacingNewlines() -> String {
        guard contains(where: \.isNewline) else { return self }
        return String(map { $0.isNewline ? " " : $0 })
    }
}

/// How much the daemon logs; each level has its sd-daemon priority.
package enum LogLevel: String, CaseIterable, Comparable, Sendable {
    case debug, info, notice, warning, error

    /// The `<N>` prefix journald reads (syslog priorities).
    var priority: Int {
        switch self {
        case .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        }
    }

    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        lhs.priority > rhs.priority
    }
}
