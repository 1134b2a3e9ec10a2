import Foundation
import LinuxSystem

/// Reads lines from a pipe as they come, with deadlines: for following `swctl watch`.
final class LineReader {
    private let descriptor: FileDescriptor
    private var buffer: [UInt8] = []
    private(set) var isAtEnd = false

    init(_ descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    /// The next line (without its newline), or nil at end of file or after `timeout`.
    func next(timeout: Duration = .seconds(60)) -> String? {
        let end = ContinuousClock.now + timeout
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let left = end - ContinuousClock.now
            guard !isAtEnd, left > .zero, (try? descriptor.poll(timeout: left)) == true else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = (try? chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }) ?? 0
            if count == 0 { isAtEnd = true } else { buffer.append(contentsOf: chunk[..<count]) }
        }
    }

    /// Lines until one satisfies `condition` (returned) or the time is up (nil).
    func next(timeout: Duration = .seconds(60), where condition: (String) -> Bool) -> String? {
        let end = ContinuousClock.now + timeout
        while let line = next(timeout: end - ContinuousClock.now) {
            if condition(line) { return line }
        }
        return nil
    }
}
