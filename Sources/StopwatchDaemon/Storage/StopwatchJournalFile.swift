import Glibc
import LinuxSystem

/// A stopwatch's journal file (`StopwatchFileName.journal`) in `stopwatches/`: appended to a
/// line at a time, each made durable with `fdatasync` before the append returns; emptied
/// (not removed) once its snapshot holds all of it, so that the next append finds it and
/// needs no flush of the directory; read whole at start. Opened through the directory's
/// descriptor, without following a link, non-blocking (a FIFO in its place fails rather than
/// holding the queue), and refused unless it is a regular file.
enum StopwatchJournalFile {
    private static let appendFlags: OpenFlags = [.writeOnly, .noFollow, .nonBlocking, OpenFlags(rawValue: O_APPEND)]

    /// Appends `line` to `file` in `directory` and flushes it. A file that was not there is
    /// made, and the directory flushed too: the entry must be as durable as the line. Returns
    /// the file's size after the line.
    static func append(_ line: [UInt8], to file: String, in directory: DirectoryDescriptor) throws(Errno) -> Int64 {
        let journal: FileDescriptor
        var isNew = false
        do {
            journal = try directory.openFile(file, appendFlags)
        } catch where error == .noEntry {
            journal = try directory.openFile(file, appendFlags.union([.create, .exclusive]), mode: 0o600)
            isNew = true
        }
        defer { journal.close() }
        let status = try journal.status()
        guard status.kind == .regular else { throw Errno(EINVAL) }
        try journal.writeAll(line)
        try journal.dataSync()
        if isNew { try directory.sync() }
        return status.size + Int64(line.count)
    }

    /// Empties `file` (its snapshot holds every line now); nothing when there is none.
    static func empty(_ file: String, in directory: DirectoryDescriptor) throws(Errno) {
        let journal: FileDescriptor
        do {
            journal = try directory.openFile(file, [.writeOnly, .noFollow, .nonBlocking])
        } catch where error == .noEntry {
            return
        }
        defer { journal.close() }
        guard try journal.status().kind == .regular else { throw Errno(EINVAL) }
        try journal.truncate(to: 0)
        try journal.dataSync()
    }

    /// `file`'s bytes, nil when there is none; throws `EFBIG` past `limit` bytes and `EINVAL`
    /// for anything but a regular file.
    static func contents(of file: String, in directory: DirectoryDescriptor, limit: Int) throws(Errno) -> [UInt8]? {
        let journal: FileDescriptor
        do {
            journal = try directory.openFile(file, [.readOnly, .noFollow, .nonBlocking])
        } catch where error == .noEntry {
            return nil
        }
        defer { journal.close() }
        guard try journal.status().kind == .regular else { throw Errno(EINVAL) }
        return try journal.readAll(limit: limit)
    }

    /// Cuts `file` to its first `size` bytes (a torn or foreign tail, `StopwatchJournal.replay`)
    /// and flushes it.
    static func cut(_ file: String, to size: Int, in directory: DirectoryDescriptor) throws(Errno) {
        let journal = try directory.openFile(file, [.writeOnly, .noFollow, .nonBlocking])
        defer { journal.close() }
        guard try journal.status().kind == .regular else { throw Errno(EINVAL) }
        try journal.truncate(to: Int64(size))
        try journal.dataSync()
    }
}
