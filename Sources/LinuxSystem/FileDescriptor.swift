import CLinux
import Glibc

/// An open file descriptor. A plain value: close it explicitly with `close()`.
package struct FileDescriptor: Hashable, Sendable, CustomStringConvertible {
    package let rawValue: CInt

    package init(rawValue: CInt) {
        self.rawValue = rawValue
    }

    package static let standardInput = FileDescriptor(rawValue: STDIN_FILENO)
    package static let standardOutput = FileDescriptor(rawValue: STDOUT_FILENO)
    package static let standardError = FileDescriptor(rawValue: STDERR_FILENO)

    package var description: String { "fd \(rawValue)" }

    /// Closes the descriptor. Never retried on `EINTR`: on Linux the descriptor is gone
    /// whatever `close` returns, and a retry could close someone else's.
    package func close() {
        _ = Glibc.close(rawValue)
    }

    /// Reads up to `buffer.count` bytes; 0 means end of file. Throws `Errno.wouldBlock` on a
    /// non-blocking descriptor with nothing to read.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try Posix.call { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Reads at most `count` bytes; an empty result means end of file.
    package func read(upTo count: Int) throws(Errno) -> [UInt8] {
        // Into uninitialised capacity: zeroing the whole buffer for a reply of a hundred bytes
        // or so faulted in every page of it, which a one-shot `swctl status` pays in full
        // (docs/PERFORMANCE.md).
        var failure: Errno?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(Errno) {
                initialized = try read(into: UnsafeMutableRawBufferPointer(buffer))
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Writes what it can of `buffer` and returns how much that was.
    package func write(_ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try Posix.call { Glibc.write(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Writes all of `bytes`, waiting on a blocking descriptor as needed.
    package func writeAll(_ bytes: [UInt8]) throws(Errno) {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                Result { () throws(Errno) -> Int in try write(UnsafeRawBufferPointer(rebasing: buffer[written...])) }
            }
            written += try result.get()
        }
    }

    package func setNonBlocking(_ nonBlocking: Bool = true) throws(Errno) {
        let flags = try Posix.call { fcntl(rawValue, F_GETFL) }
        let wanted = nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        if wanted != flags { try Posix.call { fcntl(rawValue, F_SETFL, wanted) } }
    }

    package func setCloseOnExec() throws(Errno) {
        let flags = try Posix.call { fcntl(rawValue, F_GETFD) }
        try Posix.call { fcntl(rawValue, F_SETFD, flags | FD_CLOEXEC) }
    }

    /// Opens `path` with `flags` (close-on-exec added), creating it with `mode` if asked.
    package static func open(_ path: String, _ flags: CInt, mode: mode_t = 0o600) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try Posix.call { Glibc.open(path, flags | O_CLOEXEC, mode) })
    }

    /// Takes an exclusive `flock` without waiting; false when another process holds it.
    /// The lock lasts until the descriptor is closed (or the process ends).
    package func tryLockExclusively() throws(Errno) -> Bool {
        do {
            try Posix.call { flock(rawValue, LOCK_EX | LOCK_NB) }
            return true
        } catch where error == .wouldBlock {
            return false
        }
    }

    /// The owner, mode and kind of the open file (`fstat`).
    package func status() throws(Errno) -> FileStatus {
        var info = stat()
        try Posix.call { fstat(rawValue, &info) }
        return FileStatus(info)
    }

    /// Another descriptor of the same open file (`F_DUPFD_CLOEXEC`), for another thread to
    /// use while this one may be closed.
    package func duplicate() throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try Posix.call { fcntl(rawValue, F_DUPFD_CLOEXEC, 0) })
    }

    /// Flushes the file's data and metadata to disk.
    package func sync() throws(Errno) {
        try Posix.call { fsync(rawValue) }
    }

    /// Flushes the file's data (and only the metadata needed to read it back, such as its
    /// size) to disk: cheaper than `sync` for an append.
    package func dataSync() throws(Errno) {
        try Posix.call { fdatasync(rawValue) }
    }

    /// Starts writing the file's changed pages to disk, without waiting for them
    /// (`sync_file_range` with `SYNC_FILE_RANGE_WRITE`). Durable only after `dataSync`: it
    /// lets the writes of several files go out together, so that each one's flush then
    /// finds its work mostly done (on ext4, one journal commit for all of them).
    package func startWriteback() throws(Errno) {
        try Posix.call { clinux_start_writeback(rawValue) }
    }

    /// Cuts the file (or extends it with zeros) to `size` bytes.
    package func truncate(to size: Int64) throws(Errno) {
        try Posix.call { ftruncate(rawValue, off_t(size)) }
    }

    /// Reads up to `buffer.count` bytes at `offset`, without moving the file position
    /// (`pread`); 0 means end of file.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        try Posix.call { pread(rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// Writes at `offset`, leaving the file position where it is; the count written.
    package func write(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        try Posix.call { pwrite(rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// Reads at most `count` bytes at `offset` (`pread`); fewer only at the end of the file.
    package func read(upTo count: Int, at offset: Int64) throws(Errno) -> [UInt8] {
        var failure: Errno?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = 0
            while initialized < count {
                do throws(Errno) {
                    let read = try read(into: UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[initialized...])), at: offset + Int64(initialized))
                    if read == 0 { return }
                    initialized += read
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Writes all of `bytes` at `offset` (`pwrite`), leaving the file position where it is.
    package func writeAll(_ bytes: [UInt8], at offset: Int64) throws(Errno) {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                Result { () throws(Errno) -> Int in
                    try write(UnsafeRawBufferPointer(rebasing: buffer[written...]), at: offset + Int64(written))
                }
            }
            written += try result.get()
        }
    }

    /// The bytes from the current position to the end; throws `EFBIG` past `limit` bytes.
    package func readAll(limit: Int) throws(Errno) -> [UInt8] {
        var bytes: [UInt8] = []
        while true {
            let chunk = try read(upTo: 64 * 1024)
            if chunk.isEmpty { return bytes }
            bytes += chunk
            guard bytes.count <= limit else { throw Errno(EFBIG) }
        }
    }

    /// Releases an `flock`. Closing does too, but only once every copy of the descriptor is
    /// closed, and a child being spawned holds a copy until its exec closes it.
    package func unlock() {
        _ = flock(rawValue, LOCK_UN)
    }

    /// Whether the descriptor is a terminal.
    package var isTerminal: Bool {
        isatty(rawValue) == 1
    }

    /// The width of the terminal this descriptor is, in cells (`TIOCGWINSZ`); nil when it is
    /// no terminal or does not say. Asked afresh each time: the window may have been resized.
    package var terminalColumns: Int? {
        var size = winsize()
        guard ioctl(rawValue, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Waits until the descriptor is readable (or `events` happen), at most `timeout`
    /// (forever when nil). Returns false on timeout.
    package func poll(for events: Int16 = Int16(POLLIN), timeout: Duration?) throws(Errno) -> Bool {
        var entry = pollfd(fd: rawValue, events: events, revents: 0)
        let milliseconds = timeout.map { CInt(clamping: max($0.milliseconds, 0)) } ?? -1
        return try Posix.call { Glibc.poll(&entry, 1, milliseconds) } > 0
    }
}

extension FileDescriptor {
    /// A pipe, both ends close-on-exec: (read end, write end).
    package static func pipe() throws(Errno) -> (read: FileDescriptor, write: FileDescriptor) {
        var ends: [CInt] = [-1, -1]
        try Posix.call { clinux_pipe_cloexec(&ends) }
        return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
    }

    /// An anonymous file in memory (`memfd_create`, close-on-exec) holding `bytes`, read
    /// from its start: a standard input that never blocks its writer, whether or not the
    /// reader reads it.
    package static func memoryFile(named name: String, containing bytes: [UInt8]) throws(Errno) -> FileDescriptor {
        let file = FileDescriptor(rawValue: try Posix.call { clinux_memfd_create(name) })
        do {
            try file.writeAll(bytes)
            try Posix.call { lseek(file.rawValue, 0, SEEK_SET) }
        } catch {
            file.close()
            throw error
        }
        return file
    }
}

extension FileDescriptor {
    /// Waits until any of `descriptors` is readable or hung up, at most `timeout` (rounded
    /// up to the millisecond; forever when nil). For each descriptor, whether it is.
    package static func poll(_ descriptors: [FileDescriptor], timeout: Duration?) throws(Errno) -> [Bool] {
        var entries = descriptors.map { pollfd(fd: $0.rawValue, events: Int16(POLLIN), revents: 0) }
        let milliseconds = pollMilliseconds(timeout)
        let count = nfds_t(entries.count)
        _ = try Posix.call { Glibc.poll(&entries, count, milliseconds) }
        return entries.map { $0.revents != 0 }
    }

    /// Waits until any of `requests` has one of its events (or a hang-up or error, which
    /// are always reported), at most `timeout` (forever when nil); what each has, empty for
    /// those with nothing yet. A descriptor asked for no events is watched for hang-ups only.
    package static func poll(events requests: [(FileDescriptor, PollEvents)], timeout: Duration?) throws(Errno) -> [PollEvents] {
        var entries = requests.map { pollfd(fd: $0.0.rawValue, events: $0.1.rawValue, revents: 0) }
        let milliseconds = pollMilliseconds(timeout)
        let count = nfds_t(entries.count)
        _ = try Posix.call { Glibc.poll(&entries, count, milliseconds) }
        return entries.map { PollEvents(rawValue: $0.revents) }
    }

    /// `timeout` in poll(2)'s milliseconds, rounded up (a wait cut short of its deadline
    /// would only be made again); -1, forever, for nil.
    private static func pollMilliseconds(_ timeout: Duration?) -> CInt {
        guard let timeout else { return -1 }
        let (whole, fraction) = max(timeout, .zero).components
        let rounded = whole.multipliedReportingOverflow(by: 1000)
        let extra = fraction > 0 ? (fraction + 999_999_999_999_999) / 1_000_000_000_000_000 : 0
        return rounded.overflow ? CInt.max : CInt(clamping: rounded.partialValue.addingReportingOverflow(extra).partialValue)
    }

    /// Writes all of `bytes`, as `writeAll` does, but a reader that went away is only the
    /// `EPIPE` thrown, never a `SIGPIPE` for the process, whatever the process does with that
    /// signal: for a library writing to a pipe in a program that did not ignore it. The
    /// signal is blocked in this thread for the write, and one the write raised is taken
    /// back before the mask is restored.
    package func writeAllWithoutBrokenPipeSignal(_ bytes: [UInt8]) throws(Errno) {
        var brokenPipe = sigset_t()
        sigemptyset(&brokenPipe)
        sigaddset(&brokenPipe, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &brokenPipe, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var pending = sigset_t()
        sigpending(&pending)
        let alreadyPending = sigismember(&pending, SIGPIPE) == 1
        do {
            try writeAll(bytes)
        } catch where error == .brokenPipe {
            if !alreadyPending {
                var now = timespec(tv_sec: 0, tv_nsec: 0)
                // The SIGPIPE this write raised, pending in this thread: taken, not delivered.
                while sigtimedwait(&brokenPipe, nil, &now) == -1, errno == EINTR {}
            }
            throw error
        }
    }
}
