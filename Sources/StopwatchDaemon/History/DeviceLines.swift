import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// One device's months read for one `History` call (`HistoryStream`), line after line: the
/// next interval line that matches and that the correction index does not move (`head`),
/// kept until the stream merges it with the other devices' by end.
///
/// This device's months are read through the one buffer all streams share
/// (`HistoryMemory.readBuffer`): a turn of the queue may not leave anything in it for the
/// next, so `suspend()` rewinds to the first byte not taken (the line of a plain `head` is
/// read again). Another device's are read through a small buffer of their own, taken from the
/// stream when the device's first month is opened and given back at its end (`giveBackBuffer`;
/// counted in the budget by the stream), and never past the whole lines `PeerDevices` learnt
/// (their sizes here), so a torn last line is never read.
///
/// Not thread-safe: its stream's, on the server's queue.
struct DeviceLines {
    /// A peer's read buffer.
    static let peerBufferSize = 16 * 1024

    let deviceID: String
    let deviceName: String
    /// `,"device":"<name>"}`: what ends a plain line copied into a reply.
    let deviceEnd: [UInt8]
    let isOwn: Bool
    /// Empty for another device until its first month is opened.
    private var buffer: UnsafeMutableRawBufferPointer
    /// Whether `buffer` is the streams' shared one (this device's), rewound at each turn's end.
    private let isShared: Bool
    private var months: ArraySlice<(month: HistoryMonth, size: Int64)>
    private var reading: Reading?
    /// The next line to merge, if it is read.
    private(set) var head: Head? {
        didSet { headEnd = head?.end }
    }
    /// `head`'s end (nil: no head), what the merge compares for each line: read without
    /// copying the head (a `Head` holding an `Interval` is retained when copied).
    private(set) var headEnd: Int64?
    /// Every month is read.
    private(set) var isAtEnd = false
    /// Why this device's history cannot be read (this device's only: the call fails).
    private(set) var failure: VarlinkError?

    /// A line to merge.
    enum Head {
        /// A line of the daemon's plain shape, in `buffer` at `range`: copied as bytes.
        case plain(HistoryLine.Plain, range: Range<Int>)
        case interval(Interval)

        var end: Int64 {
            switch self {
            case .plain(let plain, _): plain.end
            case .interval(let interval): interval.endMs ?? 0
            }
        }

        /// Its start and its id as a number (0 for none): what orders two heads that end
        /// together, after their devices' ids (`HistoryStream.earliestHead`).
        var startAndID: (start: Int64, id: UInt64) {
            switch self {
            case .plain(let plain, _): (plain.start, plain.id)
            case .interval(let interval): (interval.startMs, CorrectionIndex.number(interval.id) ?? 0)
            }
        }
    }

    /// A month file being read.
    private struct Reading {
        var month: MonthReading
        /// The file offset of `buffer[0]`, the bytes read there, and the next not taken.
        var chunkStart: Int64
        var count = 0
        var position = 0
    }

    /// `buffer`: the streams' shared one (`isShared`), or nil: one of its own, asked for when
    /// a month is opened (`advance`'s `takeBuffer`).
    init(
        deviceID: String, deviceName: String, isOwn: Bool, months: [(month: HistoryMonth, size: Int64)],
        buffer: UnsafeMutableRawBufferPointer?, isShared: Bool
    ) {
        self.deviceID = deviceID
        self.deviceName = deviceName
        var deviceEnd = Array(#","device":"#.utf8)
        HistoryLine.appendString(deviceName, to: &deviceEnd)
        deviceEnd.append(UInt8(ascii: "}"))
        self.deviceEnd = deviceEnd
        self.isOwn = isOwn
        self.months = months[...]
        self.buffer = buffer ?? UnsafeMutableRawBufferPointer(start: nil, count: 0)
        self.isShared = isShared
    }

    /// The bytes of a plain head's line (valid until the next `advance` or `suspend`).
    func line(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: buffer[range])
    }

    /// Takes the head: the next `advance` reads on.
    mutating func takeHead() -> Head? {
        defer { head = nil }
        return head
    }

    /// Reads until a head is found, every month is read, or about `limit` lines (or bytes / 64)
    /// are; returns the work done (at least 1). `takeBuffer` gives a device without one its
    /// read buffer, once a month of it is opened.
    mutating func advance(
        _ query: HistoryQuery, _ journal: HistoryJournal, _ corrections: CorrectionIndex, atMost limit: Int,
        takeBuffer: () -> UnsafeMutableRawBufferPointer
    ) -> Int {
        var work = 0
        while headEnd == nil, !isAtEnd, failure == nil, work < limit {
            if reading == nil {
                guard openNextMonth(query, journal, corrections) else {
                    isAtEnd = true
                    break
                }
                if buffer.count == 0 { buffer = takeBuffer() }
            }
            work += step(query, journal, corrections)
        }
        return max(work, 1)
    }

    /// Its own read buffer, given back (nil for the shared one, or none taken): at its end, or
    /// as the stream goes. Any month being read is closed and its head dropped (it may lie in
    /// the buffer).
    mutating func giveBackBuffer() -> UnsafeMutableRawBufferPointer? {
        guard !isShared, buffer.count > 0 else { return nil }
        closeReading()
        head = nil
        let given = buffer
        buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        return given
    }

    /// The turn ends: nothing is left in the shared buffer (see the type's comment).
    mutating func suspend() {
        guard isShared, reading != nil else { return }
        var keep = reading!.position
        if case .plain(_, let range)? = head {
            keep = range.lowerBound
            head = nil
        }
        reading!.chunkStart += Int64(keep)
        reading!.count = 0
        reading!.position = 0
    }

    /// One line, or one chunk read; the work it was. `reading` is changed in place, never
    /// copied out and back: it holds the carried line's array, retained and released per copy.
    private mutating func step(_ query: HistoryQuery, _ journal: HistoryJournal, _ corrections: CorrectionIndex) -> Int {
        guard reading != nil else { return 1 }
        let count = reading!.count
        let position = reading!.position
        if position < count {
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            guard let newline = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: chunk, from: position) else {
                // The start of a line that goes on in the next chunk.
                reading!.month.keepLineStart(UnsafeRawBufferPointer(rebasing: chunk[position..<count]))
                reading!.position = count
                return 1
            }
            let atLineStart = reading!.month.isAtLineStart
            reading!.position = newline + 1
            take(UnsafeRawBufferPointer(rebasing: chunk[position..<newline]), range: position..<newline, atLineStart: atLineStart, query, corrections)
            return 1
        }
        reading!.chunkStart += Int64(count)
        reading!.count = 0
        reading!.position = 0
        let chunkStart = reading!.chunkStart
        let remaining = reading!.month.size - chunkStart
        guard remaining > 0 else {
            endOfMonth(whole: true, query, journal, corrections)
            return 1
        }
        let length = Int(min(Int64(buffer.count), remaining))
        let read: Int
        do throws(Errno) {
            read = try reading!.month.file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length]), at: chunkStart)
        } catch {
            if isOwn { failure = journal.readFailure(reading!.month.month, error) }
            closeReading()
            return 1
        }
        reading!.count = read
        // Shorter than it was when listed: cut meanwhile; read what there was.
        guard read > 0 else {
            endOfMonth(whole: false, query, journal, corrections)
            return 1
        }
        // Bytes count too, a line per 64 of them: a month of megabytes without a newline
        // (garbage, zeros after a crash) must not hold one turn for seconds.
        return max(read / 64, 1)
    }

    /// A whole line: the head, if it holds an interval that matches and is read where it lies.
    private mutating func take(
        _ line: UnsafeRawBufferPointer, range: Range<Int>, atLineStart: Bool, _ query: HistoryQuery, _ corrections: CorrectionIndex
    ) {
        if atLineStart, let since = query.since, let times = HistoryLine.plainStartAndEnd(line), times.end < since, times.start <= times.end {
            // Ended before `since`: passed over by its times alone, read from its tail (a
            // fraction of `plain`'s checks: `log --since today` passes over a month of them).
            reading?.month.learnStart(times.start)
        } else if atLineStart, let plain = HistoryLine.plain(line) {
            reading?.month.learnStart(plain.start)
            guard Self.matches(plain, line, query), !corrections.corrects(number: plain.id) else { return }
            head = .plain(plain, range: range)
        } else if let interval = reading?.month.interval(endingWith: line, since: query.since) {
            guard query.matches(interval), !corrections.corrects(interval.id) else { return }
            head = .interval(interval)
        }
    }

    /// `query.matches` for a plain line, from its bytes and numbers.
    private static func matches(_ plain: HistoryLine.Plain, _ line: UnsafeRawBufferPointer, _ query: HistoryQuery) -> Bool {
        if let name = query.name {
            guard plain.name.count == name.utf8.count else { return false }
            let same = name.utf8.withContiguousStorageIfAvailable { bytes in
                memcmp(line.baseAddress! + plain.name.lowerBound, bytes.baseAddress!, bytes.count) == 0
            } ?? line[plain.name].elementsEqual(name.utf8)
            guard same else { return false }
        }
        if let until = query.until, plain.start >= until { return false }
        guard let since = query.since else { return true }
        return plain.end == plain.start ? plain.start >= since : plain.end > since
    }

    private mutating func openNextMonth(_ query: HistoryQuery, _ journal: HistoryJournal, _ corrections: CorrectionIndex) -> Bool {
        while let (month, size) = months.popFirst() {
            guard query.mayMatch(month, earliestStart: isOwn ? journal.earliestStart(of: month) : nil) else { continue }
            let opened: (file: FileDescriptor, status: FileStatus)?
            if isOwn {
                do throws(VarlinkError) {
                    opened = try journal.openToRead(month)
                } catch {
                    failure = error
                    return false
                }
            } else {
                opened = journal.peers.open(month, of: deviceID)
            }
            guard let (file, status) = opened else { continue }
            var opening = MonthReading(month: month, file: file, size: size)
            // Bisected only where the index learnt the file, by the status of the descriptor
            // opened (a file changed from outside may hold a line in end order anywhere): this
            // device's months the index learnt up to the size read, and the peers' that are
            // still the file `PeerDevices` learnt (device, inode, change time, size).
            let isLearnt = isOwn
                ? corrections.hasLearnt(month, file: status, size: size)
                : journal.peers.hasLearnt(month, of: deviceID, file: status)
            if let since = query.since, since > month.startMilliseconds, size > HistoryStream.bisectedSize, isLearnt {
                opening.offset = Self.startOffset(in: file, size: size, since: since, corrections)
                opening.skippedLines = opening.offset > 0
                if opening.skippedLines { journal.monthsBisected += 1 }
            }
            reading = Reading(month: opening, chunkStart: opening.offset)
            return true
        }
        return false
    }

    private mutating func endOfMonth(whole: Bool, _ query: HistoryQuery, _ journal: HistoryJournal, _ corrections: CorrectionIndex) {
        guard var current = reading?.month else { return }
        if case .partialLine(let rest) = current.carry {
            // A last line without its newline (this device's, written by hand): read as it
            // is. A peer's months are read to their last newline only: never one there.
            current.carry = .nothing
            if let interval = rest.withUnsafeBytes({ current.interval(endingWith: $0, since: query.since) }), query.matches(interval), !corrections.corrects(interval.id) {
                head = .interval(interval)
            }
        }
        if isOwn {
            if current.badLines > 0 { journal.skippedBadLines(current.month, count: current.badLines) }
            journal.readToEnd(current.month)
            if whole, !current.skippedLines { journal.readWhole(current.month, earliestStart: current.earliestStart, size: current.size) }
        }
        closeReading()
    }

    mutating func closeReading() {
        reading?.month.file.close()
        reading = nil
    }

    /// Where in a month's `file` (`size` bytes) reading for `since` may begin: a line start
    /// before which every line in end order ends before `since`. Found by bisecting the
    /// file's bytes: each probe is the first line after the midpoint that is in end order
    /// (an interval, not late, not corrected: `probe`). Within a month file the index learnt
    /// (`CorrectionIndex.hasLearnt`, `PeerDevices.hasLearnt`: the same file, at the size read;
    /// asked before this is called), the lines that are not late are in end order
    /// (`CorrectionIndex.isLate`); the late and corrected ones come from the index, wherever
    /// they lie. `log --since today` then reads today's lines, not
    /// the month's. 0 when no probe finds such a line (a month of damage, or of late lines):
    /// read whole, as before. The lines passed over are not read, so not checked: damage in
    /// them is noticed by a call that reads them.
    private static func startOffset(in file: FileDescriptor, size: Int64, since: Int64, _ corrections: CorrectionIndex) -> Int64 {
        var low: Int64 = 0
        var high = size
        var window = [UInt8](repeating: 0, count: 8 * 1024)
        while high - low > Int64(window.count) {
            let middle = low + (high - low) / 2
            guard let line = probe(file, at: middle, before: size, into: &window, corrections) else { break }
            if line.end < since {
                // Every line in end order up to this one ends before `since`.
                low = line.start
            } else {
                high = middle
            }
        }
        return low
    }

    /// The first line that begins after `offset` (and within the window read there) holding
    /// an interval in end order: where it begins, and its end. Nil when the window holds none.
    private static func probe(
        _ file: FileDescriptor, at offset: Int64, before size: Int64, into window: inout [UInt8], _ corrections: CorrectionIndex
    ) -> (start: Int64, end: Int64)? {
        let length = Int(min(Int64(window.count), size - offset))
        guard length > 0 else { return nil }
        return window.withUnsafeMutableBytes { raw -> (start: Int64, end: Int64)? in
            guard let count = try? file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<length]), at: offset), count > 0 else { return nil }
            let chunk = UnsafeRawBufferPointer(rebasing: raw[0..<count])
            // The line `offset` falls in may have begun before it: the next one is the first whole.
            guard var lineStart = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: chunk, from: 0).map({ $0 + 1 }) else { return nil }
            while let newline = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: chunk, from: lineStart) {
                let line = UnsafeRawBufferPointer(rebasing: chunk[lineStart..<newline])
                if let plain = HistoryLine.plain(line) {
                    if !corrections.corrects(number: plain.id) { return (offset + Int64(lineStart), plain.end) }
                } else if !HistoryLine.isCorrection(line), let interval = HistoryLine.parse(line), let end = interval.endMs, !corrections.corrects(interval.id) {
                    return (offset + Int64(lineStart), end)
                }
                lineStart = newline + 1
            }
            return nil
        }
    }
}

/// A month file being read, chunk after chunk, and what its lines told so far.
struct MonthReading {
    let month: HistoryMonth
    let file: FileDescriptor
    /// Its size when listed: what is read of it.
    let size: Int64
    /// Where reading begins: 0, or past the lines bisected away for `since` (`startOffset`).
    var offset: Int64 = 0
    var carry = Carry.nothing
    var badLines = 0
    var earliestStart: Int64?
    /// Whether reading began past the month's first line (`startOffset`): its earliest
    /// start is then not known.
    var skippedLines = false

    /// What the last chunk ended with.
    enum Carry {
        /// A whole line: the next chunk begins one.
        case nothing
        /// The start of a line that goes on in the next chunk.
        case partialLine([UInt8])
        /// The start of a line longer than `maximumLineLength`: not an interval, its rest
        /// skipped without keeping it, and counted bad at its end.
        case longLine
    }

    /// Whether the next line begins in the chunk being read (none carried from the last).
    var isAtLineStart: Bool {
        if case .nothing = carry { true } else { false }
    }

    /// Learns a start read without `interval(endingWith:since:)`.
    mutating func learnStart(_ start: Int64) {
        earliestStart = min(earliestStart ?? start, start)
    }

    /// Keeps `bytes`, the start of a line that goes on in the next chunk.
    mutating func keepLineStart(_ bytes: UnsafeRawBufferPointer) {
        switch carry {
        case .longLine:
            return
        case .nothing:
            carry = .partialLine(Array(bytes))
        case .partialLine(var start):
            // Out of `carry` while it grows, so that it is not copied.
            carry = .nothing
            start.append(contentsOf: bytes)
            carry = .partialLine(start)
        }
        if case .partialLine(let start) = carry, start.count > HistoryStream.maximumLineLength {
            carry = .longLine
        }
    }

    /// The interval `line` ends, if it holds one that may match (after `since`); counts
    /// a line that holds none as bad, and learns the month's earliest start.
    mutating func interval(endingWith line: UnsafeRawBufferPointer, since: Int64?) -> Interval? {
        let carried = carry
        carry = .nothing
        let interval: Interval?
        switch consume carried {
        case .longLine:
            badLines += 1
            return nil
        case .nothing:
            // A correction: the index's (read at its building), no interval line.
            if HistoryLine.isCorrection(line) { return nil }
            // A line of the daemon's own shape that ended before `since` cannot match:
            // passed over by its times alone, its start still counted for the month's
            // earliest (a line damaged elsewhere is then not noticed by this call, only by
            // one that reads it).
            if let since, let times = HistoryLine.plainStartAndEnd(line), times.end < since, times.start <= times.end {
                earliestStart = min(earliestStart ?? times.start, times.start)
                return nil
            }
            interval = HistoryLine.parse(line)
            // An empty line is no interval, and no damage either.
            if interval == nil, line.isEmpty { return nil }
        case .partialLine(var start):
            // Too long once whole, though its start carried was not (as the index's
            // `forEachLine` and `PeerDevices.forEachWholeLine` refuse it: the readers agree on
            // which lines there are).
            guard start.count + line.count <= HistoryStream.maximumLineLength else {
                badLines += 1
                return nil
            }
            start.append(contentsOf: line)
            let isCorrection = start.withUnsafeBytes { HistoryLine.isCorrection($0) }
            if isCorrection { return nil }
            interval = start.withUnsafeBytes { HistoryLine.parse($0) }
        }
        guard let interval else {
            badLines += 1
            return nil
        }
        earliestStart = min(earliestStart ?? interval.startMs, interval.startMs)
        return interval
    }
}
