import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// The other devices' folders in the history folder (SPEC §4 "History across devices"):
/// every `DIR/<32 hex>/` but this device's, brought by a sync tool. They are only read:
/// nothing here changes, cuts, moves or waits on anything in them. Each month is opened
/// `O_NOFOLLOW|O_NONBLOCK` and checked a regular file after the open; a month is read only
/// up to its last newline (a last line without one may still be being written by the sync
/// tool); everything that is not a month, `device.json` or `open.json` is skipped, counted
/// per device and said in the status (`problem`).
///
/// What it learnt of each month, its file (device and inode), change time, size and a digest
/// of the lines read, keeps the journal's `CorrectionIndex` current for a few `stat`s a call
/// (`refresh`): a file that changed (grew in place, replaced by a sync tool's rename, rewritten
/// in place by `rsync --inplace`: its change time moved) has the lines learnt before hashed
/// again; the same, it is read from where the last read stopped (what Syncthing's appends by
/// replacing the file are). Otherwise, or gone, or shorter, it asks the journal to build the
/// index anew (`Refresh.rebuild`), which reads every device's months again: what the index
/// learnt from lines no longer there (a record, a late line) must go, and it keeps no place of
/// each; paid only when a device's history lost or changed lines (pruned months, a hand edit).
///
/// At most `limit` peers are read (`--history-devices`), the first by id; the rest are
/// counted in the status.
///
/// Not thread-safe: the journal's, on the server's queue.
final class PeerDevices {
    /// What is skipped in a peer's folder, and how the status names it (one; `said` counts).
    enum Skip: String, CaseIterable, Comparable {
        case notAFolder = "device folder that is a link or not a folder"
        case tornLastLine = "torn last line"
        case syncTemporary = "sync temporary file"
        case conflictCopy = "sync conflict copy"
        case versionsFolder = ".stversions folder"
        case syncthingTilde = "~syncthing~ file"
        case notRegular = "month that is not a regular file"
        case otherName = "unknown file"
        case badLine = "line that is not an interval"
        case damagedCorrection = "damaged correction line"
        case openTooLarge = "open.json too large or damaged"
        case unreadable = "unreadable month"

        /// `count` of them, in words.
        func said(_ count: Int) -> String {
            guard count != 1 else { return "1 \(rawValue)" }
            switch self {
            case .notAFolder: return "\(count) device folders that are links or not folders"
            case .conflictCopy: return "\(count) sync conflict copies"
            case .versionsFolder: return "\(count) .stversions folders"
            case .notRegular: return "\(count) months that are not regular files"
            case .openTooLarge: return "\(count) open.json too large or damaged"
            case .badLine: return "\(count) lines that are not intervals"
            case .damagedCorrection: return "\(count) damaged correction lines"
            case .tornLastLine, .syncTemporary, .syncthingTilde, .otherName, .unreadable: return "\(count) \(rawValue)s"
            }
        }

        static func < (a: Skip, b: Skip) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }

        /// What a name in a device folder is, when it is not read.
        static func of(name: String) -> Skip? {
            if HistoryMonth(fileName: name) != nil || name == HistoryLayout.deviceFileName || name == PeerDevices.openFileName { return nil }
            // The daemon's own temporary files, renamed over `open.json` and `device.json`.
            if name == OpenIntervalsFile.temporaryName || name == ".\(HistoryLayout.deviceFileName).tmp" { return nil }
            if name.hasPrefix(".syncthing."), name.hasSuffix(".tmp") { return .syncTemporary }
            if name.contains(".sync-conflict-") { return .conflictCopy }
            if name == ".stversions" { return .versionsFolder }
            if name.hasPrefix("~syncthing~") { return .syncthingTilde }
            return .otherName
        }
    }

    static let openFileName = "open.json"
    /// An `open.json` larger than this is not read (counted as skipped).
    static let openFileLimit = 1024 * 1024

    /// What was learnt of one month file of a peer.
    struct LearntMonth {
        /// Which file: its device and inode.
        var device: UInt64
        var inode: UInt64
        /// Its change time (`st_ctim`) when last read: a rewrite in place at the same size
        /// moves it.
        var changeTime: Int64
        /// Its size when last read.
        var size: Int64
        /// The end of its last whole line: what the index holds, and what `History` reads.
        var wholeEnd: Int64
        /// A digest of its lines up to `wholeEnd` (`LineDigest`): a file replaced or rewritten
        /// whose lines up to there hash the same was only appended to.
        var digest: LineDigest
        /// Its damaged correction lines, and its lines that hold no interval (not JSON, out of
        /// range, longer than 64 KiB), up to `wholeEnd`: counted from what was read, so a read
        /// that fails midway, retried, counts nothing twice.
        var damaged = 0
        var bad = 0
    }

    /// A hash of lines as `forEachWholeLine` gives them, eight bytes a step (FNV-1a's primes
    /// over words): which lines a month held when read, kept to tell an append from a change.
    struct LineDigest: Equatable {
        private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

        mutating func add(_ line: UnsafeRawBufferPointer) {
            var hash = value
            var index = 0
            while index + 8 <= line.count {
                hash = (hash ^ line.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0x0000_0100_0000_01b3
                hash = hash << 29 | hash >> 35
                index += 8
            }
            while index < line.count {
                hash = (hash ^ UInt64(line[index])) &* 0x0000_0100_0000_01b3
                index += 1
            }
            // The newline, and the length: "ab\nc" is not "a\nbc".
            value = (hash ^ UInt64(line.count) << 8 ^ 0x0a) &* 0x0000_0100_0000_01b3
        }

        /// A line passed over as too long: only that it was there.
        mutating func addLongLine() {
            value = (value ^ 0xff_ffff_ffff) &* 0x0000_0100_0000_01b3
        }
    }

    /// One peer device.
    struct Peer {
        let id: String
        /// From its `device.json`; its id when that is missing or damaged.
        var name: String
        var months: [HistoryMonth: LearntMonth] = [:]
        /// What was skipped in its folder at the last look.
        var skipped: [Skip: Int] = [:]
        /// Its `open.json` at the last look: the intervals counting there (without `device`),
        /// and the wall clock their elapsed times are as of, if it says.
        var open: [Interval] = []
        var openWrittenMs: Int64?
        /// The earliest start of `open` (`Int64.max` when none): the lines of its months that
        /// end at or after it are kept in `ended`.
        var openSince = Int64.max
        /// The ids of its interval lines read that end at or after `openSince`, with their
        /// ends: an interval of `open` whose id is here has ended (its month arrived before the
        /// `open.json` that no longer holds it), and is not shown open too.
        var ended: [UInt64: Int64] = [:]
        /// What its folder listed, its `device.json` and its `open.json` were when last read
        /// (`Unchanged`): read again only once their status is not that.
        var listing: Unchanged<[String]>?
        var nameRead: Unchanged<String?>?
        var openRead: Unchanged<Bool>?
    }

    /// What was read of a file or folder, with its status then (`fstat`/`fstatat`, not
    /// following a link): while its status is the same (device, inode, change time, size,
    /// mode), it holds what it held, and is not opened again. Kept only when its change time
    /// was settled when read (`settledAfter` before): the kernel moves the change time at its
    /// clock's tick, so a change in the same tick as the read would leave the status the same.
    /// A sync tool's rename over it is another inode, and changes its folder's status.
    struct Unchanged<Value> {
        let status: FileStatus
        let value: Value
    }

    /// A peer's months as `History` reads them: each up to its last whole line learnt.
    struct Source {
        let id: String
        let name: String
        let months: [(month: HistoryMonth, size: Int64)]
    }

    private let ownID: String
    private let limit: Int
    let openRoot: (() throws(Errno) -> DirectoryDescriptor)?
    private let logger: Logger
    /// How `refresh` reads a month: `pread`; a test makes a read fail midway.
    var readChunk: ReadChunk = { try $0.read(into: $1, at: $2) }
    private(set) var peers: [String: Peer] = [:]
    /// The history folder's peer ids, as last listed (`Unchanged`): with no peer, a call costs
    /// one `fstat` of the folder, no listing.
    private var rootListing: Unchanged<[String]>?
    /// How long before it is read a change time must be for the status to be trusted
    /// (`Unchanged`), in nanoseconds; tests set 0 (their files are all just written).
    var settledAfter: Int64 = 1_000_000_000
    /// Files of the peers' folders opened, and folders listed (the history folder's included),
    /// by `refresh`: what tells a test that a call where nothing changed opened nothing.
    private(set) var filesOpened = 0
    private(set) var foldersListed = 0
    /// Peers beyond `limit` at the last look: not read.
    private(set) var notRead = 0
    /// Why the history folder could not be listed at the last look, if it could not.
    private(set) var listingProblem: String?

    init(ownID: String, limit: Int, logger: Logger, openRoot: (() throws(Errno) -> DirectoryDescriptor)?) {
        self.ownID = ownID
        self.limit = max(limit, 0)
        self.logger = logger
        self.openRoot = openRoot
    }

    /// What a refresh found.
    enum Refresh {
        /// The index holds every peer's whole lines.
        case current
        /// A peer's history lost lines: the index must be built anew (`forget()`, then a
        /// refresh from nothing).
        case rebuild
    }

    /// Whether any peer's months were learnt.
    var holdMonths: Bool {
        peers.values.contains { !$0.months.isEmpty }
    }

    /// Forgets everything learnt: the next refresh reads every peer's months from the start.
    func forget() {
        peers = [:]
    }

    /// Looks at every peer's folder and teaches `index` what is new in their months (see the
    /// type's comment): their correction records, their late lines, and which device holds
    /// the line of an interval a record corrects (`CorrectionIndex.learnOrigin`).
    func refresh(into index: inout CorrectionIndex) -> Refresh {
        guard let openRoot else { return .current }
        let root: DirectoryDescriptor
        let ids: [String]
        do throws(Errno) {
            root = try openRoot()
            do throws(Errno) {
                ids = try listed(root, as: &rootListing) { names in names.filter { $0 != ownID && DeviceIdentity.isValid($0) }.sorted() }
            } catch {
                root.close()
                throw error
            }
            listingProblem = nil
        } catch {
            // No peers to read now; what was learnt stays (the folder may come back).
            if listingProblem == nil { logger.error("cannot list the history folder for other devices (\(error))") }
            listingProblem = "cannot list the history folder for other devices (\(error))"
            return .current
        }
        defer { root.close() }
        let read = ids.prefix(limit)
        notRead = ids.count - read.count
        var result = Refresh.current
        for gone in peers.keys where !read.contains(gone) {
            if !(peers[gone]?.months.isEmpty ?? true) { result = .rebuild }
            peers[gone] = nil
        }
        for id in read {
            var peer = peers[id] ?? Peer(id: id, name: id)
            if case .rebuild = look(at: &peer, in: root, into: &index) { result = .rebuild }
            peers[id] = peer
        }
        return result
    }

    /// One peer's folder: its name, what is skipped, its months' new lines into `index`.
    private func look(at peer: inout Peer, in root: DirectoryDescriptor, into index: inout CorrectionIndex) -> Refresh {
        peer.skipped = [:]
        let folder: DirectoryDescriptor
        let names: [String]
        do throws(Errno) {
            // Never through a link: `openDirectory` opens with O_NOFOLLOW|O_DIRECTORY.
            folder = try root.openDirectory(peer.id)
            do throws(Errno) {
                names = try listed(folder, as: &peer.listing) { $0 }
            } catch {
                folder.close()
                throw error
            }
        } catch {
            // A link or file with a device's name, or unreadable: nothing of it is read.
            peer.skipped[.notAFolder, default: 0] += 1
            peer.open = []
            return peer.months.isEmpty ? .current : .rebuild
        }
        defer { folder.close() }
        let nameStatus = try? folder.status(of: HistoryLayout.deviceFileName)
        if let read = peer.nameRead, read.status == nameStatus {
            peer.name = read.value ?? peer.id
        } else {
            if nameStatus != nil { filesOpened += 1 }
            let name = Self.name(in: folder)
            peer.name = name ?? peer.id
            peer.nameRead = settled(nameStatus).map { Unchanged(status: $0, value: name) }
        }
        let earlierSince = readOpen(of: &peer, in: folder)
        // The lines learnt before this look: those read now are kept in `ended` as they are read.
        let learntBefore = earlierSince ? peer.months.mapValues(\.wholeEnd) : [:]
        var months: [HistoryMonth] = []
        for name in names {
            if let month = HistoryMonth(fileName: name) {
                months.append(month)
            } else if let skip = Skip.of(name: name) {
                peer.skipped[skip, default: 0] += 1
            }
        }
        var result = Refresh.current
        let present = Set(months)
        for month in peer.months.keys where !present.contains(month) {
            peer.months[month] = nil
            result = .rebuild
        }
        for month in months.sorted() {
            if case .rebuild = learn(month, of: &peer, in: folder, into: &index) { result = .rebuild }
        }
        if earlierSince { findEnded(of: &peer, upTo: learntBefore, in: folder) }
        return result
    }

    /// Reads `open.json` of `peer` (see `Peer.open`); a file larger than `openFileLimit`, or
    /// damaged, is counted as skipped and holds nothing. Keeps in `ended` only the lines that
    /// end at or after its earliest start; true when that start is earlier than the last one
    /// (the lines learnt before, not kept then, must be looked at: `findEnded`).
    private func readOpen(of peer: inout Peer, in folder: DirectoryDescriptor) -> Bool {
        let openStatus = try? folder.status(of: Self.openFileName)
        if let read = peer.openRead, read.status == openStatus {
            // As read last time: the same intervals, the same earliest start.
            if read.value { peer.skipped[.openTooLarge, default: 0] += 1 }
            return false
        }
        peer.open = []
        peer.openWrittenMs = nil
        var skipped = false
        defer { peer.openRead = settled(openStatus).map { Unchanged(status: $0, value: skipped) } }
        if openStatus != nil { filesOpened += 1 }
        if let (file, status) = Self.openMonth(Self.openFileName, in: folder) {
            defer { file.close() }
            if status.size <= Self.openFileLimit, let bytes = try? file.readAll(limit: Self.openFileLimit),
                let json = try? JSONParser.parse(bytes), case .object(let object) = json, case .array(let items)? = object["intervals"]
            {
                if case .int(let written)? = object["written_ms"], (0...Interval.latestMs).contains(written) {
                    peer.openWrittenMs = written
                }
                for item in items {
                    guard case .object(var fields) = item else { continue }
                    fields["end_ms"] = nil
                    fields["device"] = nil
                    guard let interval = try? Interval(json: .object(fields)), IntervalID.isValid(interval.id),
                        StopwatchName.isValid(interval.name), interval.elapsedMs <= HistoryLine.maximumElapsedMilliseconds,
                        HistoryLine.isValidText(of: interval)
                    else { continue }
                    peer.open.append(interval)
                }
            } else {
                peer.skipped[.openTooLarge, default: 0] += 1
                skipped = true
            }
        }
        let since = peer.open.map(\.startMs).min() ?? Int64.max
        let earlier = since < peer.openSince
        peer.openSince = since
        peer.ended = since == Int64.max ? [:] : peer.ended.filter { $0.value >= since }
        return earlier
    }

    /// Keeps in `peer.ended` the lines of its months learnt before this look (up to
    /// `learntBefore`'s ends) that end at or after `openSince`: read again from the month of
    /// that start on (an interval line is in the month of its end), only their ids and ends.
    /// Paid when the earliest open start goes earlier: mostly a peer starting something after
    /// nothing counted there, one month read.
    private func findEnded(of peer: inout Peer, upTo learntBefore: [HistoryMonth: Int64], in folder: DirectoryDescriptor) {
        let since = peer.openSince
        guard since != Int64.max else { return }
        var ended = peer.ended
        for (month, end) in learntBefore where month.endMilliseconds > since && peer.months[month] != nil {
            guard let (file, _) = Self.openMonth(month.fileName, in: folder) else { continue }
            defer { file.close() }
            _ = try? Self.forEachWholeLine(of: file, from: 0, to: end) { line, _ in
                Self.noteEnded(line, since: since, into: &ended)
            }
        }
        peer.ended = ended
    }

    /// Keeps `line`'s id and end in `ended` when it is an interval line that ends at or after
    /// `since` (a correction is not: what it corrects is the index's).
    private static func noteEnded(_ line: UnsafeRawBufferPointer, since: Int64, into ended: inout [UInt64: Int64]) {
        if let end = HistoryLine.plainEnd(line) {
            guard end >= since, HistoryLine.hasIDPrefix(line), let id = HistoryLine.hexNumber(line, at: 7) else { return }
            ended[id] = end
        } else if !HistoryLine.isCorrection(line), let interval = HistoryLine.parse(line), let end = interval.endMs, end >= since,
            let id = CorrectionIndex.number(interval.id)
        {
            ended[id] = end
        }
    }

    /// Reads what is new of one month of a peer into `index`.
    private func learn(_ month: HistoryMonth, of peer: inout Peer, in folder: DirectoryDescriptor, into index: inout CorrectionIndex) -> Refresh {
        // Unchanged since it was learnt, by one `fstatat` (the same file, change time and
        // size, as the `fstat` after an open would say): not opened.
        if let learnt = peer.months[month], let stamp = try? folder.status(of: month.fileName), stamp.kind == .regular,
            learnt.device == stamp.device, learnt.inode == stamp.inode, learnt.changeTime == stamp.changeTime, learnt.size == stamp.size
        {
            // What was skipped in it as learnt, said again in this look (as `sayLearnt`).
            if learnt.wholeEnd < learnt.size { peer.skipped[.tornLastLine, default: 0] += 1 }
            if learnt.bad > 0 { peer.skipped[.badLine, default: 0] += learnt.bad }
            if learnt.damaged > 0 { peer.skipped[.damagedCorrection, default: 0] += learnt.damaged }
            return .current
        }
        filesOpened += 1
        guard let (file, status) = Self.openMonth(month.fileName, in: folder) else {
            peer.skipped[.notRegular, default: 0] += 1
            if peer.months.removeValue(forKey: month) != nil { return .rebuild }
            return .current
        }
        defer { file.close() }
        let learnt = peer.months[month]
        /// What was skipped in it as learnt, said again in this look.
        func sayLearnt() {
            guard let learnt else { return }
            if learnt.wholeEnd < learnt.size { peer.skipped[.tornLastLine, default: 0] += 1 }
            if learnt.bad > 0 { peer.skipped[.badLine, default: 0] += learnt.bad }
            if learnt.damaged > 0 { peer.skipped[.damagedCorrection, default: 0] += learnt.damaged }
        }
        if let learnt, learnt.device == status.device, learnt.inode == status.inode, learnt.size == status.size,
            learnt.changeTime == status.changeTime
        {
            sayLearnt()
            return .current
        }
        if let learnt {
            // Changed: only appended to when the lines learnt are all still there, the same.
            var digest = LineDigest()
            let end: Int64
            do throws(Errno) {
                end = try Self.forEachWholeLine(of: file, from: 0, to: learnt.wholeEnd, read: readChunk, longLine: { digest.addLongLine() }) { line, _ in
                    digest.add(line)
                }
            } catch {
                peer.skipped[.unreadable, default: 0] += 1
                sayLearnt()
                return .current
            }
            guard end == learnt.wholeEnd, digest == learnt.digest else {
                peer.months[month] = nil
                return .rebuild
            }
        }
        // Only what follows the last whole line read: all of a new month.
        let from = learnt?.wholeEnd ?? 0
        var digest = learnt?.digest ?? LineDigest()
        var damaged = learnt?.damaged ?? 0
        var bad = learnt?.bad ?? 0
        let device = peer.id
        let base = (month.year * 12 + month.month) << 36
        let openSince = peer.openSince
        var ended = peer.ended
        defer { peer.ended = ended }
        // A read that fails midway leaves the month as learnt, to be read from there again:
        // the greatest end its lines read taught goes back too, or they would read as late.
        let greatestEnd = index.greatestEnd(of: month, device: device)
        let wholeEnd: Int64
        do throws(Errno) {
            wholeEnd = try Self.forEachWholeLine(
                of: file, from: from, to: status.size, read: readChunk,
                longLine: {
                    digest.addLongLine()
                    bad += 1
                }
            ) { line, offset in
                digest.add(line)
                guard HistoryLine.isCorrection(line) else {
                    if !HistoryJournal.learnEnd(of: line, in: month, device: device, into: &index) { bad += 1 }
                    if openSince != Int64.max { Self.noteEnded(line, since: openSince, into: &ended) }
                    return
                }
                if let correction = HistoryCorrection.parse(line) {
                    // Its place in the device's files: the month, then the offset, the same
                    // whichever read found it.
                    index.add(correction, device: device, place: base | Int(offset), isOwn: false)
                } else {
                    damaged += 1
                }
            }
        } catch {
            index.setGreatestEnd(greatestEnd, of: month, device: device)
            peer.skipped[.unreadable, default: 0] += 1
            sayLearnt()
            return .current
        }
        let read = LearntMonth(
            device: status.device, inode: status.inode, changeTime: status.changeTime, size: status.size, wholeEnd: wholeEnd,
            digest: digest, damaged: damaged, bad: bad
        )
        peer.months[month] = read
        if read.wholeEnd < read.size { peer.skipped[.tornLastLine, default: 0] += 1 }
        if bad > 0 { peer.skipped[.badLine, default: 0] += bad }
        if damaged > 0 { peer.skipped[.damagedCorrection, default: 0] += damaged }
        return .current
    }

    /// The names in `folder` (`transform`ed), as listed last time while its status is the same
    /// (`Unchanged`; a name added, removed or renamed there changes it), else listed now.
    private func listed<Value>(
        _ folder: DirectoryDescriptor, as last: inout Unchanged<Value>?, _ transform: ([String]) -> Value
    ) throws(Errno) -> Value {
        let status = try? folder.status()
        if let last, let status, last.status == status { return last.value }
        foldersListed += 1
        let value = transform(try folder.entries())
        last = settled(status).map { Unchanged(status: $0, value: value) }
        return value
    }

    /// `status`, if its change time is `settledAfter` before now (see `Unchanged`).
    private func settled(_ status: FileStatus?) -> FileStatus? {
        guard let status, status.changeTime <= Posix.clockTime(.realtime).nanoseconds - settledAfter else { return nil }
        return status
    }

    /// A peer's month (or other file), opened to read without following a link or waiting
    /// on a FIFO, and its status after the open; nil when it is not a regular file or cannot
    /// be opened.
    static func openMonth(_ name: String, in folder: DirectoryDescriptor) -> (FileDescriptor, FileStatus)? {
        guard let file = try? folder.openFile(name, [.readOnly, .noFollow, .nonBlocking]) else { return nil }
        guard let status = try? file.status(), status.kind == .regular else {
            file.close()
            return nil
        }
        return (file, status)
    }

    /// Reads into the buffer from the offset: `pread`, or a test's failure.
    typealias ReadChunk = (FileDescriptor, UnsafeMutableRawBufferPointer, Int64) throws(Errno) -> Int

    /// Calls `body` with each line of `file` between `from` and `to` that ends with a newline
    /// (without it), and its offset; a line longer than `HistoryStream.maximumLineLength` is
    /// passed over (and told to `longLine`). Returns the end of the last whole line (`from`
    /// when there is none).
    static func forEachWholeLine(
        of file: FileDescriptor, from: Int64, to: Int64, read: ReadChunk = { try $0.read(into: $1, at: $2) }, longLine: () -> Void = {},
        _ body: (UnsafeRawBufferPointer, Int64) -> Void
    ) throws(Errno) -> Int64 {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var lines = LineSplitter(from: from)
        var offset = from
        while offset < to {
            let length = Int(min(Int64(buffer.count), to - offset))
            let count = try buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) -> Int in
                    try read(file, UnsafeMutableRawBufferPointer(rebasing: raw[0..<length]), offset)
                }
            }.get()
            guard count > 0 else { break }
            buffer.withUnsafeBytes { raw in
                lines.feed(UnsafeRawBufferPointer(rebasing: raw[0..<count]), at: offset, longLine: longLine, body)
            }
            offset += Int64(count)
        }
        return lines.wholeEnd
    }

    /// The name in a device folder's `device.json`, if it holds a valid one: one that
    /// `--device-name` takes (`StopwatchName.isValid`: no control characters, so no newline).
    /// It goes into History replies and into the daemon's status, which reaches systemd as a
    /// `STATUS=` field of an sd_notify message whose fields are lines: a newline there would
    /// add fields (`WATCHDOG=trigger`). Any other name is not shown: the device goes by its id.
    static func name(in folder: DirectoryDescriptor) -> String? {
        guard let (file, _) = openMonth(HistoryLayout.deviceFileName, in: folder) else { return nil }
        defer { file.close() }
        guard let bytes = try? file.readAll(limit: 64 * 1024), let json = try? JSONParser.parse(bytes), case .object(let object) = json,
            case .string(let name)? = object["name"], StopwatchName.isValid(name)
        else { return nil }
        return name
    }

    /// The peers' months as `History` reads them, those whose name or id is `device` (all
    /// when nil), by id.
    func sources(device: String?) -> [Source] {
        peers.keys.sorted().compactMap { id in
            let peer = peers[id]!
            guard device.map({ $0 == peer.id || $0 == peer.name }) ?? true else { return nil }
            let months = peer.months.keys.sorted().compactMap { month in
                peer.months[month].map { (month, $0.wholeEnd) }
            }
            return Source(id: id, name: peer.name, months: months)
        }
    }

    /// Opens a peer's month to read, as `refresh` does, with its status as opened (which file
    /// it is: `hasLearnt`); nil when it is gone or not a regular file any more (its lines are
    /// then not in this answer).
    func open(_ month: HistoryMonth, of id: String) -> (file: FileDescriptor, status: FileStatus)? {
        guard let openRoot, let root = try? openRoot() else { return nil }
        defer { root.close() }
        guard let folder = try? root.openDirectory(id) else { return nil }
        defer { folder.close() }
        guard let (file, status) = Self.openMonth(month.fileName, in: folder) else { return nil }
        do throws(Errno) {
            try file.setNonBlocking(false)
        } catch {
            file.close()
            return nil
        }
        return (file, status)
    }

    /// Whether `status` (of a descriptor opened on `id`'s `month`) is the file `refresh`
    /// learnt, unchanged since: the same device, inode, change time and size. Then its lines
    /// that are neither late nor corrected are in end order, and it may be bisected
    /// (`DeviceLines.startOffset`); a file changed since (grown, replaced, rewritten in
    /// place) may hold a line in end order anywhere.
    func hasLearnt(_ month: HistoryMonth, of id: String, file status: FileStatus) -> Bool {
        guard let learnt = peers[id]?.months[month] else { return false }
        return learnt.device == status.device && learnt.inode == status.inode && learnt.changeTime == status.changeTime
            && learnt.size == status.size
    }

    /// The counting intervals in each peer's `open.json` (`{"written_ms":W,"intervals":[…]}`)
    /// as read at the last `refresh`, with `device` set to the peer's name; those of peers
    /// whose name or id is not `device` left out, and those whose line the peer's months
    /// already hold ended (`Peer.ended`: its month synced before its `open.json`).
    ///
    /// Their elapsed times are as of `written_ms` (the file is written at starts and stops
    /// only): each gets the time since, `max(0, now - written_ms)` by this device's wall clock
    /// (`now`), as if it counted on unbroken. An estimate: the peer may have slept since (a
    /// stopwatch that skips sleep then counted less), stopped it in a file not synced yet, or
    /// its clock may differ from this one. A file without `written_ms` (an older daemon's) is
    /// read as it is.
    func openIntervals(device: String?, now: Int64) -> [Interval] {
        var all: [Interval] = []
        for id in peers.keys.sorted() {
            guard let peer = peers[id], device.map({ $0 == peer.id || $0 == peer.name }) ?? true else { continue }
            let since = peer.openWrittenMs.map { max(0, now - $0) } ?? 0
            for var interval in peer.open {
                if let number = CorrectionIndex.number(interval.id), peer.ended[number] != nil { continue }
                interval.device = peer.name
                interval.elapsedMs = min(interval.elapsedMs + since, HistoryLine.maximumElapsedMilliseconds)
                all.append(interval)
            }
        }
        return all
    }

    /// What was skipped, per device, and the peers not read; nil when nothing was. Nothing
    /// in it comes from a peer's files but its name (a valid one: `name(in:)`) and its id (32
    /// hex digits): what is skipped is counted, never named, so no file name a peer's folder
    /// holds reaches the status.
    var problem: String? {
        var parts: [String] = []
        if let listingProblem { parts.append(listingProblem) }
        for id in peers.keys.sorted() {
            guard let peer = peers[id], !peer.skipped.isEmpty else { continue }
            let counts = peer.skipped.keys.sorted().map { $0.said(peer.skipped[$0]!) }
            let who = peer.name == peer.id ? peer.id : "\(peer.name) (\(peer.id))"
            parts.append("device \(who): skipped \(counts.joined(separator: ", "))")
        }
        if notRead > 0 {
            parts.append("\(notRead) other device\(notRead == 1 ? "" : "s") not read (--history-devices \(limit))")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
