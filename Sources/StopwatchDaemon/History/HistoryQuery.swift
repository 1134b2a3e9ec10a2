import StopwatchProtocol

/// What a `History` call asks for: one name or all, the window [since, until) on the
/// wall clock, either end open, and one device or all.
struct HistoryQuery: Sendable {
    var name: String?
    var since: Int64?
    var until: Int64?
    /// A device's name or its full id (SPEC §3 `History(device)`); nil: every device.
    var device: String?

    /// Whether the device `id`, named `name`, is one the call asks for.
    func matchesDevice(id: String, name: String) -> Bool {
        guard let device else { return true }
        return device == id || device == name
    }

    /// Whether `interval` overlaps the window: it begins before `until` and ends after
    /// `since`; one of no length matches where it lies, `since <= start < until`. An open
    /// interval (no end yet) ends at `start + elapsed`, now.
    func matches(_ interval: Interval) -> Bool {
        if let name, !Self.sameName(interval.name, name) { return false }
        let end = interval.endMs ?? interval.startMs.addingReportingOverflow(interval.elapsedMs).partialValue
        if let until, interval.startMs >= until { return false }
        guard let since else { return true }
        return end == interval.startMs ? interval.startMs >= since : end > since
    }

    /// Whether two names are the same stopwatch's: compared as given, by their bytes, as
    /// `StopwatchKey` does (`String`'s `==` would take "café" in NFC and in NFD for one).
    static func sameName(_ a: String, _ b: String) -> Bool {
        StopwatchKey(a) == StopwatchKey(b)
    }

    /// Whether the month `month` may hold a match, knowing (when known) the earliest start
    /// in it. A month before `since`'s ended before the window began; one after `until`'s
    /// matters only for an interval that began before `until` and ended months later.
    func mayMatch(_ month: HistoryMonth, earliestStart: Int64?) -> Bool {
        if let since, month < HistoryMonth(epochMilliseconds: since) { return false }
        if let until, month > HistoryMonth(epochMilliseconds: until), let earliestStart, earliestStart >= until { return false }
        return true
    }
}
