/// What `swctl status NAME` prints for a counting stopwatch without laps, and so what the C
/// client must print too: `NAME counting H:MM:SS` and a newline. A client that fails fast
/// prints nothing of the kind, and must not pass for a fast one.
enum StatusLine {
    static func isCounting(_ output: [UInt8], name: String) -> Bool {
        let text = String(decoding: output, as: UTF8.self)
        let prefix = "\(name) counting "
        guard text.hasPrefix(prefix), text.hasSuffix("\n") else { return false }
        let time = text.dropFirst(prefix.count).dropLast().split(separator: ":", omittingEmptySubsequences: false)
        guard time.count == 3, !time[0].isEmpty, time[1].count == 2, time[2].count == 2,
            time.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let minutes = Int(time[1]), let seconds = Int(time[2])
        else { return false }
        return minutes < 60 && seconds < 60
    }
}
