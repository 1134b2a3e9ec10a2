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
