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

    /// Whether `device` is the name or the id of one of `devices`, as the daemon's `device`
    /// filter matches (a name that two devices share matches both).
    package static func names(_ device: String, among devices: [Device]) -> Bool {
        devices.contains { $0.id == device || $0.name == device }
    }

    /// The name `log`'s table compares each interval's device with for `--device DEVICE`:
    /// the name of the device whose id or name `device` is; `device` itself when none is.
    package static func name(of device: String, among devices: [Device]) -> String {
        devices.first { $0.id == device }?.name ?? device
    }
}
