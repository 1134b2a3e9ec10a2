import Varlink

/// What the outbox holds, read line by line at start: the runs not yet started, the
/// expiries told in this boot, how far the file is made of whole lines, and what was
/// skipped. Fed the file's bytes in chunks of any size (`feed`), with no I/O of its own,
/// so tests give it bytes.
///
/// A line longer than `lineLimit`, one that is not an `OutboxLine`, and a run numbered
/// out of order are bad: skipped and counted, never trusted. The bytes after the last
/// newline are a torn line (a write cut by a crash): `wholeLength` says where to cut.
/// Memory stays bounded whatever the file holds: only the newest `maximumRuns` runs (more
/// could not wait: the backlog drops the oldest) and `maximumTold` told expiries are kept.
struct OutboxScan {
    /// A run's line: where it is, without its newline.
    struct RunLine: Equatable {
        var number: UInt64
        var offset: Int64
        var length: Int
    }

    let lineLimit: Int
    /// The boot this daemon runs in: expiries told in another are not this boot's instants.
    let bootID: String
    let maximumRuns: Int
    let maximumTold: Int
    /// The runs read, in order, started or not: the newest `maximumRuns`, from `runsHead`.
    private var allRuns: [RunLine] = []
    private var runsHead = 0
    /// The numbers of the runs left out for `maximumRuns`, as ranges (consecutive, as a
    /// daemon numbers them; at most 1,024 ranges, the last widened beyond).
    private var leftOut: [ClosedRange<UInt64>] = []
    /// The expiries told in this boot, in order: the newest `maximumTold`, from `toldHead`.
    private var allTold: [ToldExpiry] = []
    private var toldHead = 0
    /// Lines naming a told expiry, of any boot.
    private(set) var toldLines = 0
    /// The greatest run number a `started` line names.
    private(set) var startedThrough: UInt64 = 0
    /// The greatest run number read.
    private(set) var lastRun: UInt64 = 0
    private(set) var badLines = 0
    /// Why the first bad line was bad, for the log.
    private(set) var firstBadLine: String?
    /// The bytes up to the last newline: the file's whole lines.
    private(set) var wholeLength: Int64 = 0
    /// The bytes fed.
    private(set) var length: Int64 = 0
    /// The line being read: its bytes (none once it is too long) and its length.
    private var partial: [UInt8] = []
    private var partialLength = 0

    init(lineLimit: Int, bootID: String, maximumRuns: Int = 100_000, maximumTold: Int = 100_000) {
        self.lineLimit = lineLimit
        self.bootID = bootID
        self.maximumRuns = max(maximumRuns, 1)
        self.maximumTold = max(maximumTold, 1)
    }

    /// The runs read (the newest `maximumRuns`), in order.
    var runs: ArraySlice<RunLine> { allRuns[runsHead...] }
    /// The expiries told in this boot (the newest `maximumTold`), in order.
    var told: ArraySlice<ToldExpiry> { allTold[toldHead...] }
    /// The runs whose hooks are still to start, in order.
    var waiting: [RunLine] { runs.filter { $0.number > startedThrough } }
    /// Runs whose hooks were still to start, left out for `maximumRuns`: more waited than
    /// may (a damaged file, or a smaller backlog than before).
    var droppedRuns: Int {
        leftOut.reduce(0) { count, range in
            let first = max(range.lowerBound, startedThrough + 1)
            return first > range.upperBound ? count : count + Int(range.upperBound - first + 1)
        }
    }
    /// The bytes of a torn last line: after the last newline.
    var tornLength: Int64 { length - wholeLength }
    /// The number the next run written is to have.
    var nextRun: UInt64 { max(lastRun, startedThrough) + 1 }

    mutating func feed(_ chunk: ArraySlice<UInt8>) {
        var start = chunk.startIndex
        while let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let piece = chunk[start..<newline]
            let lineStart = wholeLength
            let lineLength = partialLength + piece.count
            if lineLength > lineLimit {
                bad("a line of more than \(lineLimit) bytes")
            } else if partial.isEmpty {
                take(piece, at: lineStart)
            } else {
                partial += piece
                take(partial[...], at: lineStart)
            }
            partial.removeAll(keepingCapacity: true)
            partialLength = 0
            length += Int64(piece.count + 1)
            wholeLength = length
            start = chunk.index(after: newline)
        }
        let rest = chunk[start...]
        partialLength += rest.count
        length += Int64(rest.count)
        if partialLength > lineLimit {
            partial.removeAll()
        } else {
            partial += rest
        }
    }

    private mutating func take(_ line: ArraySlice<UInt8>, at offset: Int64) {
        let decoded: OutboxLine
        do {
            decoded = try OutboxLine(decoding: line)
        } catch {
            bad(error.reason)
            return
        }
        switch decoded {
        case .run(let run):
            guard run.number > lastRun else {
                bad("run \(run.number) after run \(lastRun)")
                return
            }
            lastRun = run.number
            if let dropped = Self.appendKeepingNewest(RunLine(number: run.number, offset: offset, length: line.count), to: &allRuns, head: &runsHead, maximum: maximumRuns) {
                if let last = leftOut.last, last.upperBound + 1 == dropped.number || leftOut.count >= 1024 {
                    leftOut[leftOut.count - 1] = last.lowerBound...dropped.number
                } else {
                    leftOut.append(dropped.number...dropped.number)
                }
            }
        case .told(let expiry, let boot):
            toldLines += 1
            if boot == bootID { Self.appendKeepingNewest(expiry, to: &allTold, head: &toldHead, maximum: maximumTold) }
        case .started(let through):
            startedThrough = max(startedThrough, through)
        }
    }

    /// Appends `element`, leaving out the oldest beyond `maximum`; the one left out.
    @discardableResult
    private static func appendKeepingNewest<Element>(_ element: Element, to array: inout [Element], head: inout Int, maximum: Int) -> Element? {
        array.append(element)
        guard array.count - head > maximum else { return nil }
        let dropped = array[head]
        head += 1
        if head >= 1024, head * 2 >= array.count {
            array.removeFirst(head)
            head = 0
        }
        return dropped
    }

    private mutating func bad(_ reason: String) {
        badLines += 1
        if firstBadLine == nil { firstBadLine = reason }
    }
}
