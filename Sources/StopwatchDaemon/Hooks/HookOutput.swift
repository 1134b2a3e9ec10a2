/// What of a hook's output (standard output and error, one pipe) goes to the log: its first
/// `maximumLines` lines and `maximumBytes` bytes, each line as it completes; the rest is
/// read and counted, never kept, so a hook that prints megabytes neither grows the daemon
/// nor stalls on a full pipe.
struct HookOutput {
    let maximumBytes: Int
    let maximumLines: Int
    private var line: [UInt8] = []
    private var keptBytes = 0
    private var keptLines = 0
    /// Bytes read past the limits, not logged.
    private(set) var droppedBytes = 0

    init(maximumBytes: Int = 4096, maximumLines: Int = 32) {
        self.maximumBytes = maximumBytes
        self.maximumLines = maximumLines
    }

    private var isFull: Bool { keptBytes >= maximumBytes || keptLines >= maximumLines }

    /// Takes what was read; returns the lines it completed, to log.
    mutating func append(_ bytes: some Collection<UInt8>) -> [String] {
        var lines: [String] = []
        var index = bytes.startIndex
        while index != bytes.endIndex, !isFull {
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            keptBytes += 1
            if byte == UInt8(ascii: "\n") {
                lines.append(take())
            } else {
                line.append(byte)
                // A line cut at the limit is logged as far as it went.
                if keptBytes >= maximumBytes { lines.append(take()) }
            }
        }
        let rest = bytes.distance(from: index, to: bytes.endIndex)
        let (sum, overflow) = droppedBytes.addingReportingOverflow(rest)
        droppedBytes = overflow ? Int.max : sum
        return lines
    }

    /// At the end of the output: the unfinished last line, if any, to log.
    mutating func finish() -> [String] {
        line.isEmpty ? [] : [take()]
    }

    private mutating func take() -> String {
        defer { line.removeAll(keepingCapacity: true) }
        keptLines += 1
        var text = String(decoding: line, as: UTF8.self)
        if text.hasSuffix("\r") { text.removeLast() }
        return text
    }
}
