import StopwatchProtocol

/// One `History` reply being encoded straight to bytes: `{"parameters":{"intervals":[`, the
/// intervals so far and, once complete, `]}`, `,"continues":true` when more follow, `}` and
/// the NUL. It holds no more than it was granted (`HistoryMemory`): it takes an interval
/// only while that is sure to fit, and its bytes grow by doubling up to the grant, never
/// past it; only its first interval is taken whatever its size, so a reply holds at least one.
struct HistoryReply {
    private(set) var bytes: [UInt8] = []
    /// Intervals in it.
    private(set) var count = 0
    /// Bytes it may hold.
    var granted = 0

    private static let start = Array(#"{"parameters":{"intervals":["#.utf8)
    /// The longest end: `]}`, `,"continues":true`, `}` and the NUL.
    private static let longestEnd = #"]},"continues":true}"#.utf8.count + 1

    /// Nothing: the reply between two.
    init() {}

    init(granted: Int) {
        self.granted = granted
        bytes.reserveCapacity(min(granted, 64 * 1024))
        bytes.append(contentsOf: Self.start)
    }

    /// At least the bytes `interval` takes in a reply, with its comma: every byte of its
    /// name, note, phase and device escaped (`\u00XX`, 6 bytes), its id, its three numbers of
    /// 20 digits, and the keys.
    static func bound(_ interval: Interval) -> Int {
        (interval.name.utf8.count + (interval.note?.utf8.count ?? 0) + (interval.phase?.utf8.count ?? 0) + interval.device.utf8.count) * 6
            + 192
    }

    /// Adds `interval`; false (and nothing added) when the reply is full: it holds
    /// `batchSize` intervals, or `interval` might take it past its grant.
    mutating func add(_ interval: Interval, batchSize: Int) -> Bool {
        let needed = bytes.count + Self.bound(interval) + Self.longestEnd
        if count > 0, count >= batchSize || needed > granted { return false }
        if needed > bytes.capacity {
            // Doubling, as an array grows, but not past the grant.
            bytes.reserveCapacity(max(min(bytes.capacity * 2, granted), needed))
        }
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        HistoryLine.encodeObject(interval, device: interval.device, into: &bytes)
        count += 1
        return true
    }

    /// Adds an interval line of the daemon's plain shape (`HistoryLine.plain`) as it is, but
    /// its closing brace, then `deviceEnd` (`,"device":"…"}`): the same bytes `add` writes for
    /// it, without building it. False (and nothing added) as `add`; its size is known
    /// exactly, so it is counted exactly.
    mutating func add(plainLine line: UnsafeRawBufferPointer, deviceEnd: [UInt8], batchSize: Int) -> Bool {
        let object = line.count - 1 + deviceEnd.count
        let needed = bytes.count + 1 + object + Self.longestEnd
        if count > 0, count >= batchSize || needed > granted { return false }
        if needed > bytes.capacity {
            bytes.reserveCapacity(max(min(bytes.capacity * 2, granted), needed))
        }
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[0..<(line.count - 1)]))
        bytes.append(contentsOf: deviceEnd)
        count += 1
        return true
    }

    /// The complete message; `continues` when more replies follow.
    mutating func message(continues: Bool) -> [UInt8] {
        bytes.append(contentsOf: "]}".utf8)
        if continues { bytes.append(contentsOf: #","continues":true"#.utf8) }
        bytes.append(contentsOf: "}\u{0}".utf8)
        return bytes
    }
}
