import LinuxSystem
import StopwatchProtocol
import Varlink

/// What `Devices` answers of each device (SPEC §3 `Device`): the intervals its months hold
/// (what arrived from it: each line of an interval that ended, and each `track` record;
/// corrections are not applied, so an amended interval counts once and a deleted one still
/// counts), the end of the latest, and when its folder last changed (the latest
/// modification of its months and `open.json`).
///
/// Counting does not read every month at every call: what was counted of each (device,
/// month) is kept with the file's stamp (device, inode, change time, size). A month whose
/// stamp is unchanged costs one `fstatat`; one that grew in place (same file, longer) is read
/// from the end of its last whole line counted (a same-file edit that also grew it, such as
/// `rsync --inplace`, which DEVICES.md advises against, keeps its old prefix's count); any
/// other change (replaced by a sync tool, shorter) is counted again whole. Memory: a few numbers per month of each
/// device read; months and devices gone are forgotten.
///
/// Not thread-safe: the journal's, on the server's queue.
struct DeviceSummaries {
    /// What was counted of one month file.
    struct CountedMonth {
        var stamp: FileStamp
        /// The end of its last whole line counted.
        var wholeEnd: Int64
        var intervals: Int64
        var lastEndMs: Int64?
    }

    /// One device's answer, but its id, name and `this`.
    struct Summary: Equatable {
        var intervals: Int64 = 0
        var lastEndMs: Int64?
        var changedMs: Int64?
    }

    /// By device id, then month.
    private(set) var counted: [String: [HistoryMonth: CountedMonth]] = [:]
    /// Month files read (whole or from where they grew) since this was made: what tests check
    /// to see that an unchanged month is not read again.
    private(set) var monthsRead = 0

    /// Counts the months of device `id` in `folder` (those that are not regular files are
    /// left out, as `History` leaves them out) and stamps its `open.json`.
    mutating func summary(of id: String, in folder: DirectoryDescriptor) -> Summary {
        let months = ((try? folder.entries()) ?? []).compactMap(HistoryMonth.init(fileName:))
        var kept: [HistoryMonth: CountedMonth] = [:]
        var summary = Summary()
        for month in months {
            guard let counted = count(month, of: id, in: folder) else { continue }
            kept[month] = counted
            summary.intervals += counted.intervals
            summary.lastEndMs = Self.latest(summary.lastEndMs, counted.lastEndMs)
            summary.changedMs = Self.latest(summary.changedMs, Self.shown(counted.stamp.modifiedMs))
        }
        counted[id] = kept
        if let open = try? folder.stamp(of: PeerDevices.openFileName), open.isRegular {
            summary.changedMs = Self.latest(summary.changedMs, Self.shown(open.modifiedMs))
        }
        return summary
    }

    /// A modification time as `changed_ms` may carry it: it is whatever a sync tool or
    /// `touch` set (before 1970, past the year 9999), and such a time is none, each file's
    /// alone, so that one odd file neither hides the others' nor makes a reply no client reads.
    static func shown(_ modifiedMs: Int64) -> Int64? {
        (0...Interval.latestMs).contains(modifiedMs) ? modifiedMs : nil
    }

    /// Forgets the devices not in `ids` (gone from the history folder, or no longer read).
    mutating func keep(only ids: Set<String>) {
        for id in counted.keys where !ids.contains(id) { counted[id] = nil }
    }

    /// One month, as counted before when its stamp is unchanged, else read (from where it
    /// grew, or whole); nil when it is not a regular file or cannot be read.
    private mutating func count(_ month: HistoryMonth, of id: String, in folder: DirectoryDescriptor) -> CountedMonth? {
        guard let stamp = try? folder.stamp(of: month.fileName), stamp.isRegular else { return nil }
        let before = counted[id]?[month]
        if let before, before.stamp == stamp { return before }
        guard let (file, _) = PeerDevices.openMonth(month.fileName, in: folder) else { return nil }
        defer { file.close() }
        // The stamp of what is read: the file may have changed since the `fstatat`.
        guard let opened = try? file.stamp() else { return nil }
        var result = CountedMonth(stamp: opened, wholeEnd: 0, intervals: 0, lastEndMs: nil)
        if let before, before.stamp.device == opened.device, before.stamp.inode == opened.inode, opened.size > before.stamp.size,
            before.wholeEnd <= opened.size
        {
            // Grown in place (an append): only what follows the last whole line counted.
            result.wholeEnd = before.wholeEnd
            result.intervals = before.intervals
            result.lastEndMs = before.lastEndMs
        }
        monthsRead += 1
        var intervals = result.intervals
        var lastEndMs = result.lastEndMs
        let wholeEnd = try? PeerDevices.forEachWholeLine(of: file, from: result.wholeEnd, to: opened.size) { line, _ in
            guard let end = Self.intervalEnd(of: line) else { return }
            intervals += 1
            lastEndMs = Self.latest(lastEndMs, end)
        }
        guard let wholeEnd else { return nil }
        result.wholeEnd = wholeEnd
        result.intervals = intervals
        result.lastEndMs = lastEndMs
        return result
    }

    /// The end of the interval `line` adds: an interval's line (that ended), or a `track`
    /// record; nil for any other record, and for a line that is not either.
    static func intervalEnd(of line: UnsafeRawBufferPointer) -> Int64? {
        guard !line.isEmpty else { return nil }
        guard HistoryLine.isCorrection(line) else { return HistoryLine.plainEnd(line) ?? HistoryLine.parse(line)?.endMs }
        guard line.starts(with: Self.trackPrefix), let correction = HistoryCorrection.parse(line),
            case .form(.track, _, let interval?) = correction.change
        else { return nil }
        return interval.endMs
    }

    private static let trackPrefix = Array(#"{"op":"track""#.utf8)

    private static func latest(_ a: Int64?, _ b: Int64?) -> Int64? {
        guard let a else { return b }
        guard let b else { return a }
        return max(a, b)
    }
}

extension HistoryJournal {
    /// `Devices` (SPEC §3): this device, then every other device read (`PeerDevices`, kept
    /// current as for `History`), by name then id. This device's count includes the intervals
    /// not written yet (writing fails). Throws what a `History` call would fail with.
    func devices() throws(VarlinkError) -> [Device] {
        // Looks at the history folder: the peers there now, and their names.
        _ = try correctionIndex()
        var own = Device(id: deviceID, name: deviceName, this: true, intervals: 0)
        if let folder = try? directoryDescriptor() {
            own = device(summary: deviceSummaries.summary(of: deviceID, in: folder), id: deviceID, name: deviceName, this: true)
        } else if let openDirectoryToRead, let folder = try? openDirectoryToRead() {
            defer { folder.close() }
            own = device(summary: deviceSummaries.summary(of: deviceID, in: folder), id: deviceID, name: deviceName, this: true)
        }
        for interval in unwritten {
            own.intervals += 1
            if let end = interval.endMs { own.lastEndMs = max(own.lastEndMs ?? end, end) }
        }
        var others: [Device] = []
        if let openRoot = peers.openRoot, let root = try? openRoot() {
            defer { root.close() }
            for (id, peer) in peers.peers {
                // A name that is not a folder (a link, a file) holds nothing of a device.
                guard let folder = try? root.openDirectory(id) else { continue }
                defer { folder.close() }
                others.append(device(summary: deviceSummaries.summary(of: id, in: folder), id: id, name: peer.name, this: false))
            }
        }
        deviceSummaries.keep(only: Set([deviceID] + others.map(\.id)))
        others.sort { $0.name != $1.name ? $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) : $0.id < $1.id }
        return [own] + others
    }

    private func device(summary: DeviceSummaries.Summary, id: String, name: String, this: Bool) -> Device {
        Device(id: id, name: name, this: this, intervals: summary.intervals, lastEndMs: summary.lastEndMs, changedMs: summary.changedMs)
    }
}
