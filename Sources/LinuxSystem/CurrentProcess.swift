import CLinux
import Dispatch
import Glibc

/// This process: its id, sleeping, exiting.
package enum CurrentProcess {
    package static var id: pid_t { getpid() }

    /// The path of this program's file, as the kernel has it (`/proc/self/exe`); nil when it
    /// cannot be read (no /proc) or is longer than `PATH_MAX`.
    package static var executablePath: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard let length = try? Posix.call({ readlink("/proc/self/exe", &buffer, buffer.count) }), length < buffer.count else {
            return nil
        }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package static func exit(_ status: CInt) -> Never {
        Glibc.exit(status)
    }

    /// Parks the calling thread for good; the process goes on in its other threads (dispatch
    /// queues) until one of them exits it. Unlike `dispatchMain()`, which ends the main thread
    /// with `pthread_exit` (its forced unwind confuses AddressSanitizer), the thread and its
    /// stack stay as they are.
    package static func parkForever() -> Never {
        while true { pause() }
    }

    /// Sleeps for `duration`, resuming after signals until the time is up.
    package static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1, errno == EINTR {
            request = remaining
        }
    }

    /// On SIGINT, writes a newline to standard output and exits 130, as an interrupted
    /// program does: for a program that redraws one terminal line, so the shell prompt
    /// starts on a line of its own. Only async-signal-safe calls happen in the handler.
    package static func endLineAndExitOnInterrupt() {
        signal(SIGINT) { _ in
            var newline: UInt8 = 10
            _ = write(STDOUT_FILENO, &newline, 1)
            _exit(130)
        }
    }

    /// Exits (status 0) once nobody can read standard output any more: its pipe's reader
    /// closed it, or its socket or terminal hung up. Found without writing, by a thread that
    /// waits in `poll` for nothing but those events; a file or /dev/null never ends it.
    package static func exitWhenStandardOutputCloses() {
        DispatchQueue(label: "standard-output-watch").async {
            let hungUp = CShort(POLLERR | POLLHUP | POLLNVAL)
            var entry = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
            while true {
                // A failing poll (other than EINTR, which Posix.call retries) ends the watch.
                guard let ready = try? Posix.call({ poll(&entry, 1, -1) }) else { return }
                if ready > 0, entry.revents & hungUp != 0 { exitAtOnce(0) }
            }
        }
    }

    /// Ends the process without running exit handlers: safe from any thread, even while
    /// another thread is exiting (two `exit` calls at once are undefined). Only for a
    /// program that buffers nothing, as swctl writes with write(2).
    package static func exitAtOnce(_ status: CInt) -> Never {
        _exit(status)
    }

    /// Makes every descriptor from 3 on close-on-exec: those a parent left open (a shell's,
    /// a launcher's) stay usable here but reach no program this process starts. One
    /// `close_range` call on Linux 5.11 and later; before, each listed in /proc/self/fd.
    /// Call at start, before this process opens anything it means a child to inherit.
    package static func closeInheritedDescriptorsOnExec() {
        if clinux_close_range_cloexec(3) == 0 { return }
        markCloseOnExecListedInProc()
    }

    /// What `closeInheritedDescriptorsOnExec` does before Linux 5.11: each descriptor
    /// /proc/self/fd lists from 3 on, but its own.
    static func markCloseOnExecListedInProc() {
        guard let directory = opendir("/proc/self/fd") else { return }
        defer { closedir(directory) }
        let own = dirfd(directory)
        let nameOffset = MemoryLayout<dirent>.offset(of: \.d_name)!
        while let entry = readdir(directory) {
            // In place, up to its NUL: a record is only as long as its name (see `entries`).
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            guard let descriptor = CInt(name), descriptor >= 3, descriptor != own else { continue }
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0, flags & FD_CLOEXEC == 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// Opens /dev/null on standard input, output or error where they are closed, so that no
    /// file the program opens later takes their numbers.
    package static func openStandardDescriptorsOnDevNull() {
        // Standard input, output and error, 0 to 2: no array (the first thing `swctl status`
        // does, before its quick path, which touches no generic type).
        var descriptor = STDIN_FILENO
        while descriptor <= STDERR_FILENO {
            // open returns the lowest free number: this one.
            if fcntl(descriptor, F_GETFD) == -1 { _ = open("/dev/null", O_RDWR) }
            descriptor += 1
        }
    }
}
