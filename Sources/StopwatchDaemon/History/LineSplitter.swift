import LinuxSystem

/// Cuts a month file read in chunks into its lines, as `HistoryStream` reads them: a line
/// longer than `HistoryStream.maximumLineLength` is passed over whole, wherever the chunks
/// cut it, so that every reader of a month (the index of this device's months, the peers'
/// refresh) agrees on which lines exist. A line that a chunk cuts is carried (at most
/// `maximumLineLength` bytes) until its newline comes.
///
/// Not thread-safe: a value, the reader's own.
struct LineSplitter {
    private var carry: [UInt8] = []
    /// Where the carried line begins in the file.
    private var carryStart: Int64 = 0
    /// Within a line too long to keep, until its newline.
    private var skipping = false
    /// Just after the newline of the last whole line fed (where reading began when none).
    private(set) var wholeEnd: Int64

    init(from offset: Int64) {
        wholeEnd = offset
    }

    /// Feeds `chunk`, read at `offset` (just after what was fed before): calls `line` with
    /// each whole line it ends (without its newline) and where the line begins, and
    /// `longLine` for each line passed over.
    mutating func feed(
        _ chunk: UnsafeRawBufferPointer, at offset: Int64, longLine: () -> Void, _ line: (UnsafeRawBufferPointer, Int64) -> Void
    ) {
        // A line within one chunk goes out unmeasured: chunks no longer than a line may be.
        precondition(chunk.count <= HistoryStream.maximumLineLength, "a chunk longer than the longest line")
        var start = 0
        while let newline = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: chunk, from: start) {
            let piece = UnsafeRawBufferPointer(rebasing: chunk[start..<newline])
            if skipping {
                skipping = false
                longLine()
            } else if carry.isEmpty {
                // No longer than a chunk: readers' chunks are at most `maximumLineLength`.
                line(piece, offset + Int64(start))
            } else if carry.count + piece.count > HistoryStream.maximumLineLength {
                // Too long once whole, though its start carried was not.
                carry = []
                longLine()
            } else {
                carry.append(contentsOf: piece)
                let whole = carry
                carry = []
                whole.withUnsafeBytes { line($0, carryStart) }
            }
            start = newline + 1
            wholeEnd = offset + Int64(start)
        }
        if start < chunk.count, !skipping {
            if carry.isEmpty { carryStart = offset + Int64(start) }
            carry.append(contentsOf: chunk[start...])
            if carry.count > HistoryStream.maximumLineLength {
                carry = []
                skipping = true
            }
        }
    }

    /// The last line when it has no newline (a torn line, or one still being written), and
    /// where it begins; nil when there is none, or it is passed over as too long.
    var lastLine: (bytes: [UInt8], start: Int64)? {
        carry.isEmpty || skipping ? nil : (carry, carryStart)
    }
}
