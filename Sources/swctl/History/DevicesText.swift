import StopwatchProtocol

/// `swctl devices`' table (SPEC §5): each device's name, id (its first 8 digits), the
/// intervals that arrived from it, the end of the latest, the last change of its folder (local
/// times), and which one is this daemon's own.
package enum DevicesText {
    package static func table(_ devices: [Device]) -> [String] {
        guard !devices.isEmpty else { return ["no devices"] }
        let header = ["NAME", "ID", "INTERVALS", "LATEST END", "CHANGED", ""]
        let alignments: [StatusText.Alignment] = [.left, .left, .right, .left, .left, .left]
        let rows = devices.map { device in
            [
                LogText.shown(device.name), LogText.shortID(device.id), "\(device.intervals)", time(device.lastEndMs),
                time(device.changedMs), device.this ? "this device" : "",
            ]
        }
        let widths = header.indices.map { column in
            ([header] + rows).map { TerminalWidth.of($0[column]) }.max() ?? 0
        }
        return ([header] + rows).map { cells in
            var line = cells.indices
                .map { StatusText.padded(cells[$0], to: widths[$0], alignment: alignments[$0]) }
                .joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }
    }

    /// A local time as `log` shows it; `-` for none.
    private static func time(_ milliseconds: Int64?) -> String {
        guard let milliseconds else { return "-" }
        return LocalTime.dateTime(milliseconds)?.text ?? "\(milliseconds)"
    }

    /// Whether more than one device has history: `log` then shows a DEVICE column.
    package static func severalHaveHistory(_ devices: [Device]) -> Bool {
        devices.filter { $0.intervals > 0 }.count > 1
    }

    /// What `--device DEVICE` names among `devices`.
    package enum Resolution: Equatable {
        /// What to send as the daemon's `device` filter: a name or a full id as given (a
        /// name two devices share matches both), or the full id of a prefix.
        case device(String)
        case none
        /// A prefix of more than one device's id.
        case ambiguous
    }

    /// `device` as a name or a full id of one of `devices`, else as a prefix of 8 digits or
    /// more of exactly one's id (the table shows 8).
    package static func resolve(_ device: String, among devices: [Device]) -> Resolution {
        if devices.contains(where: { $0.id == device || $0.name == device }) { return .device(device) }
        guard device.utf8.count >= 8 else { return .none }
        let matching = devices.filter { $0.id.hasPrefix(device) }
        switch matching.count {
        case 0: return .none
        case 1: return .device(matching[0].id)
        default: return .ambiguous
        }
    }

    /// The name `log`'s table compares each interval's device with for `--device DEVICE`:
    /// the name of the device whose id or name `device` is; `device` itself when none is.
    /// The table knows intervals' devices by name only: when `device` is an id whose name
    /// another device has too, both devices' rows are shown, and `warn` says so.
    package static func name(of device: String, among devices: [Device], warn: (String) -> Void = { _ in }) -> String {
        guard let named = devices.first(where: { $0.id == device }) else { return device }
        if devices.contains(where: { $0.id != named.id && $0.name == named.name }) {
            warn("swctl: another device is named '\(named.name)' too: the table shows both; --csv and --json keep to the id")
        }
        return named.name
    }
}
